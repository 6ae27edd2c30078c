"""A window learned from a context-length error recovers: successful requests probe it back up,
never above the configured window, and `holon status` shows use against the compaction budget and
the window both (issue 36)."""

from __future__ import annotations

from scenario_helpers import cli

from holon.agent import admission
from holon.agent.handle import Agent
from holon.context import window
from holon.ops import status
from holon.runtime.tick import tick

OVERFLOW = {"error": {"status": 400, "kind": "context_length_exceeded", "message": "too long"}}
WINDOW = 40_000


def _turn(agent, text: str) -> None:
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body(text))
    tick(agent)


def test_a_learned_window_recovers_to_the_configured_one(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", str(WINDOW))
    monkeypatch.setattr(window, "PROBE_REQUESTS", 2)
    ok = {"text": "ok", "usage": {"input_tokens": 3000, "output_tokens": 2}}
    model = script(OVERFLOW, *[ok] * 40)
    monkeypatch.setenv("HOLON_MODEL", model)
    a = Agent(agent)
    _turn(agent, "overflow, then recover")  # the retry succeeds: one successful request
    learned = a.state().context.learned_window[model]
    assert learned < WINDOW
    doc = status.agent_summary(agent)["context"]
    assert doc["learned_window"] == learned and doc["configured_window"] == WINDOW
    assert doc["context_window"] == learned
    assert doc["use_of_budget"] == round(3000 / doc["prompt_budget"], 3)
    assert doc["use_of_window"] == round(3000 / learned, 3)
    code, out, _ = cli("status", "a")
    budget = doc["prompt_budget"]
    assert code == 0
    assert (
        f"3000 tokens in the last request: {3000 / budget:.0%} of the {budget}-token compaction "
        f"budget, {3000 / learned:.0%} of the {learned}-token window (learned; {WINDOW} "
        "configured)"
    ) in out
    seen = [learned]
    for i in range(30):
        _turn(agent, f"turn {i}")
        ctx = a.state().context
        if model not in ctx.learned_window:
            break
        seen.append(ctx.learned_window[model])
    assert model not in a.state().context.learned_window, seen  # back to the configured one
    assert seen == sorted(seen) and len(set(seen)) > 2 and max(seen) < WINDOW
    _turn(agent, "the next request has the whole window")
    doc = status.agent_summary(agent)["context"]
    assert doc["context_window"] == WINDOW and doc["learned_window"] is None

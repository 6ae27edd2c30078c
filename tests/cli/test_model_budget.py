"""Per-agent model override and token budgets enforced across ticks."""

from __future__ import annotations

import json

from helpers import run, subprocess_env


def test_model_set_show_clear(agent, script):
    env = subprocess_env(
        HOLON_MODEL="scripted/default.jsonl", HOLON_FALLBACK_MODELS="scripted/f1.jsonl"
    )
    doc = json.loads(run("model", "show", "a", "--json", env=env).stdout)
    assert doc["source"] == "runtime_default" and doc["effective_model"] == "scripted/default.jsonl"
    assert doc["effective_fallback_models"] == ["scripted/f1.jsonl"]
    model = script({"text": "from the override"})
    doc = json.loads(run("model", "set", "a", model, "--json", env=env).stdout)
    assert doc["source"] == "agent_override" and doc["override_model"] == model
    assert run("prompt", "a", "hi", env=env).stdout == "from the override\n"
    doc = json.loads(run("model", "clear", "a", "--json", env=env).stdout)
    assert doc["source"] == "runtime_default" and doc["override_model"] is None
    assert run("model", "set", "a", "nonsense").returncode == 2


def test_turn_budget_stops_before_the_request(agent, script):
    model = script(
        *[
            {
                "tool_calls": [{"name": "X", "arguments": {}}],
                "usage": {"input_tokens": 60, "output_tokens": 0},
            }
        ]
        * 5,
        {"text": "never"},
    )
    assert run("model", "budget", "a", "--turn-tokens", "100").returncode == 0
    r = run("prompt", "a", "go", "--json", "--model", model)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert "budget" in doc["failure_artifact"]["summary"]
    rounds = [
        x for x in run("transcript", "a", "--jsonl").stdout.splitlines() if '"assistant_round"' in x
    ]
    assert len(rounds) == 2  # 60 + 60 >= 100: the third request was never sent
    events = [json.loads(x) for x in run("events", "a", "--jsonl").stdout.splitlines()]
    assert any(
        e["kind"] == "runtime_error" and e["data"]["failure_kind"] == "budget_exhausted"
        for e in events
    )


def test_daily_budget_spans_ticks_and_rolls_over(agent, script):
    model = script(*[{"text": "ok", "usage": {"input_tokens": 80, "output_tokens": 0}}] * 4)
    run("model", "budget", "a", "--daily-tokens", "100")
    day1 = subprocess_env(HOLON_NOW="2026-03-01T10:00:00Z")
    assert run("prompt", "a", "one", "--model", model, env=day1).returncode == 0
    assert run("prompt", "a", "two", "--model", model, env=day1).returncode == 0  # 80 < 100
    r = run("prompt", "a", "three", "--model", model, env=day1)
    assert r.returncode == 3 and "daily token budget" in r.stderr  # held, not failed
    day2 = subprocess_env(HOLON_NOW="2026-03-02T00:05:00Z")
    r = run("prompt", "a", "four", "--model", model, env=day2)
    assert r.returncode == 0, r.stderr  # "three" ran first at the rollover, then "four"
    texts = [json.loads(x)["text"] for x in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert texts[-2:] == ["ok", "ok"]


def _status(env: dict[str, str]) -> dict:
    return json.loads(run("status", "a", "--json", env=env).stdout)


def _tick(env: dict[str, str]) -> dict:
    return json.loads(run("tick", "a", "--json", env=env).stdout)["agents"][0]


def test_spent_daily_budget_holds_new_messages_until_raised(agent, script):
    """Issue 32, safe defaults for unattended agents (the spec is silent on budgets): once the
    daily token budget is spent, a new message is neither failed nor dropped at the next tick;
    it stays queued, visible in `holon status` and `holon doctor`, and runs once the budget is
    raised."""
    model = script(*[{"text": "done", "usage": {"input_tokens": 120, "output_tokens": 0}}] * 2)
    env = subprocess_env(HOLON_NOW="2026-03-01T10:00:00Z", HOLON_MODEL=model)
    assert run("model", "budget", "a", "--daily-tokens", "100", env=env).returncode == 0
    assert run("prompt", "a", "spend it", env=env).returncode == 0  # 120 of 100 spent
    r = run("enqueue", "a", "--kind", "system_tick", "--text", "later", env=env)
    assert r.returncode == 0, r.stderr
    for _ in range(2):  # a second tick neither consumes it nor briefs the hold again
        tick = _tick(env)
        assert tick["outcome"] == "held" and tick["held"]["used"] == 120
    doc = _status(env)
    assert doc["queue"]["pending"] == 1 and doc["queue"]["held_by_budget"] == 1
    assert doc["budget"]["hold"]["limit"] == 100
    assert "daily token budget is spent" in run("status", "a", env=env).stdout
    found = json.loads(run("doctor", "a", "--json", env=env).stdout)["agents"][0]["findings"]
    assert [f["status"] for f in found if f["check"] == "budget"] == ["warn"]
    briefs = [json.loads(x) for x in run("briefs", "a", "--jsonl", env=env).stdout.splitlines()]
    assert [b["kind"] for b in briefs] == ["result", "failure"]  # the hold, said once

    assert run("model", "budget", "a", "--daily-tokens", "1000", env=env).returncode == 0
    tick = _tick(env)
    assert [t["status"] for t in tick["turns"]] == ["completed"]
    assert _status(env)["queue"]["pending"] == 0 and _status(env)["budget"]["hold"] is None
    assert _tick(env)["outcome"] == "idle"  # it ran once

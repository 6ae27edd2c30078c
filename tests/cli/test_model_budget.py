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
    model = script(*[{"text": "ok", "usage": {"input_tokens": 80, "output_tokens": 0}}] * 3)
    run("model", "budget", "a", "--daily-tokens", "100")
    day1 = subprocess_env(HOLON_NOW="2026-03-01T10:00:00Z")
    assert run("prompt", "a", "one", "--model", model, env=day1).returncode == 0
    assert run("prompt", "a", "two", "--model", model, env=day1).returncode == 0  # 80 < 100
    r = run("prompt", "a", "three", "--model", model, env=day1)
    assert r.returncode == 1 and "daily token budget" in r.stderr
    day2 = subprocess_env(HOLON_NOW="2026-03-02T00:05:00Z")
    assert run("prompt", "a", "four", "--model", model, env=day2).returncode == 0

"""Issue 32, safe defaults for agents left alone (where the spec is silent): a default cap of
self-driven turns in a row, and a default daily token budget for new agents."""

from __future__ import annotations

import json

from helpers import run, subprocess_env

from holon.agent import autonomy
from holon.home import init


def _briefs(env: dict[str, str]) -> list[dict]:
    return [json.loads(x) for x in run("briefs", "a", "--jsonl", env=env).stdout.splitlines()]


def test_self_driven_agent_stops_at_the_default_cap(holon_env, script):
    """A self-driven agent (each turn Enqueues its own follow-up) runs at most the default cap of
    self-driven turns after the operator's prompt; the next follow-up is set aside, not run,
    with an action_required brief saying how to go on, and `holon status` shows the count."""
    cap = autonomy.DEFAULT_MAX_SELF_DRIVEN_TURNS
    turn = [
        {"tool_calls": [{"name": "Enqueue", "arguments": {"text": "keep going"}}]},
        {"text": "did a step"},
    ]
    model = script(*turn * (cap + 3))
    env = subprocess_env(HOLON_MODEL=model)
    assert run("init", "--agent-id", "a", env=env).returncode == 0
    # the prompt's ticks run until idle: its turn, then the follow-ups up to the cap
    assert run("prompt", "a", "work on your own", env=env).returncode == 0
    briefs = _briefs(env)
    assert [b["kind"] for b in briefs] == ["result"] * (cap + 1) + ["failure"]
    stop = briefs[-1]
    assert stop["visibility"] == "action_required"
    assert f"stopped after {cap} self-driven turns in a row" in stop["text"]
    assert "holon prompt a" in stop["text"] and "max_self_driven_turns" in stop["text"]
    doc = json.loads(run("status", "a", "--json", env=env).stdout)
    assert doc["budget"]["self_driven_turns"] == {"consecutive": cap, "cap": cap}
    assert doc["queue"]["pending"] == 0 and doc["queue"]["dead_letters"] == 1
    assert json.loads(run("tick", "a", "--json", env=env).stdout)["agents"][0]["outcome"] == "idle"
    # an operator prompt resets the count: the agent goes on (two more follow-ups run, the
    # second out of script), never set aside at once
    assert run("prompt", "a", "continue", env=env).returncode == 0
    doc = json.loads(run("status", "a", "--json", env=env).stdout)
    assert doc["budget"]["self_driven_turns"]["consecutive"] == 2
    assert doc["queue"]["dead_letters"] == 1


def test_cap_is_configurable(holon_env, script):
    model = script(
        *[{"tool_calls": [{"name": "Enqueue", "arguments": {"text": "k"}}]}, {"text": "step"}] * 4
    )
    env = subprocess_env(HOLON_MODEL=model, HOLON_MAX_SELF_DRIVEN_TURNS="2")
    run("init", "--agent-id", "a", env=env)
    assert run("prompt", "a", "go", env=env).returncode == 0
    assert [b["kind"] for b in _briefs(env)] == ["result"] * 3 + ["failure"]


def test_new_agents_get_a_default_daily_budget(holon_env):
    """A new agent starts with the default daily token budget (configurable; 0 for none),
    shown by `holon status`; a private child spends from its parent's instead."""
    assert run("init", "--agent-id", "a").returncode == 0
    doc = json.loads(run("status", "a", "--json").stdout)
    assert doc["budget"]["limits"] == {"daily_tokens": init.DEFAULT_DAILY_TOKENS}
    assert "tokens today" in run("status", "a").stdout
    env = subprocess_env(HOLON_DEFAULT_DAILY_TOKENS="5000")
    assert run("init", "--agent-id", "b", env=env).returncode == 0
    doc = json.loads(run("status", "b", "--json").stdout)
    assert doc["budget"]["limits"] == {"daily_tokens": 5000}
    env = subprocess_env(HOLON_DEFAULT_DAILY_TOKENS="0")
    assert run("init", "--agent-id", "c", env=env).returncode == 0
    assert json.loads(run("status", "c", "--json").stdout)["budget"]["limits"] == {}

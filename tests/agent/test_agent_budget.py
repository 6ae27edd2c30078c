"""holon.agent.budget: which model runs, and token budgets checked before every provider request."""

from __future__ import annotations

import pytest

from holon import config
from holon.agent import budget
from holon.agent.handle import Agent
from holon.home.init import DEFAULT_DAILY_TOKENS
from holon.model.conversation import TokenUsage
from holon.paths import config_path
from holon.store import jsonl
from holon.store.atomic import read_json, write_json

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def _identity_budget(home, **limits):
    ident = read_json(home.agent_json)
    ident["budget"] = limits
    write_json(home.agent_json, ident)


def _events(home, kind):
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == kind]


def test_effective_model_precedence(agent, monkeypatch):
    a = Agent(agent)
    assert budget.effective_model(a) == (None, "runtime_default")
    config_path().write_text('model = "cfg/model"\n')
    config.reset()
    assert budget.effective_model(a) == ("cfg/model", "runtime_default")
    monkeypatch.setenv("HOLON_MODEL", "env/model")
    assert budget.effective_model(a) == ("env/model", "runtime_default")
    budget.set_override(a, "agent/model")
    assert budget.effective_model(a) == ("agent/model", "agent_override")
    assert budget.effective_model(a, "cli/model") == ("cli/model", "invocation")
    budget.set_override(a, None)
    assert budget.effective_model(a) == ("env/model", "runtime_default")


def test_override_is_seen_by_another_instance(agent):
    budget.set_override(Agent(agent), "other/model")
    assert budget.effective_model(Agent(agent)) == ("other/model", "agent_override")
    assert read_json(agent.state_json)["model_override"] == "other/model"


def test_model_state(agent, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", "env/model")
    monkeypatch.setenv("HOLON_FALLBACK_MODELS", "f/1,f/2")
    a = Agent(agent)
    assert budget.model_state(a.state().model_override) == {
        "source": "runtime_default",
        "runtime_default_model": "env/model",
        "effective_model": "env/model",
        "effective_fallback_models": ["f/1", "f/2"],
        "override_model": None,
    }
    budget.set_override(a, "o/m")
    state = budget.model_state(a.state().model_override)
    assert state["source"] == "agent_override" and state["effective_model"] == "o/m"


def test_set_override_events(agent):
    a = Agent(agent)
    budget.set_override(a, "x/y")
    budget.set_override(a, None)
    assert _events(agent, "model_override_set") == [{"model_ref": "x/y"}]
    assert _events(agent, "model_override_cleared") == [{}]


def test_limits_budget_json_wins_over_agent_json(agent):
    a = Agent(agent)
    assert budget.limits(a) == {"daily_tokens": DEFAULT_DAILY_TOKENS}  # a new agent's default
    _identity_budget(agent, daily_tokens=1000, turn_tokens=100)
    assert budget.limits(a) == {"daily_tokens": 1000, "turn_tokens": 100}
    write_json(agent.budget_json, {"schema_version": 1, "turn_tokens": 50})
    assert budget.limits(a) == {"daily_tokens": 1000, "turn_tokens": 50}


@pytest.mark.parametrize("value", [0, -5, True, "100", 1.5, None])
def test_limits_ignore_non_positive_and_non_integer_values(agent, value):
    write_json(agent.budget_json, {"turn_tokens": value, "daily_tokens": 7, "other_tokens": 9})
    assert budget.limits(Agent(agent)) == {"daily_tokens": 7}


def test_check_without_limits_never_refuses(agent):
    budget.set_limits(Agent(agent), daily_tokens=0)  # removes the new agent's default
    budget.check(Agent(agent), TokenUsage.of(10**9, 10**9))


def test_check_turn_limit(agent):
    a = Agent(agent)
    budget.set_limits(a, turn_tokens=100)
    budget.check(a, TokenUsage.of(60, 39))
    with pytest.raises(budget.Exhausted) as err:
        budget.check(a, TokenUsage.of(60, 40))
    failure = err.value
    assert failure.diagnostics == {"budget": "turn_tokens"}
    assert "100 of 100" in failure.message


def test_check_daily_limit_counts_today_utc(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    a = Agent(agent)
    budget.set_limits(a, daily_tokens=1000)
    a.update_state(lambda s: s.token_usage_by_day.update({"2027-01-14": 5000, "2027-01-15": 900}))
    budget.check(a, TokenUsage.of(50, 49))
    with pytest.raises(budget.Exhausted) as err:
        budget.check(a, TokenUsage.of(50, 50))
    assert err.value.diagnostics == {"budget": "daily_tokens"}
    assert "1000 of 1000" in err.value.message and "00:00 UTC" in err.value.message
    monkeypatch.setenv("HOLON_NOW", str(T0 + 86400))  # a new UTC day
    budget.check(a, TokenUsage.of(50, 50))


def test_turn_limit_is_checked_before_daily(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    a = Agent(agent)
    budget.set_limits(a, daily_tokens=10, turn_tokens=10)
    with pytest.raises(budget.Exhausted) as err:
        budget.check(a, TokenUsage.of(10, 0))
    assert err.value.diagnostics == {"budget": "turn_tokens"}


def test_set_limits_zero_removes_none_keeps(agent):
    a = Agent(agent)
    budget.set_limits(a, daily_tokens=500, turn_tokens=50)
    assert read_json(agent.budget_json) == {
        "schema_version": 1,
        "daily_tokens": 500,
        "turn_tokens": 50,
    }
    budget.set_limits(a, turn_tokens=0, daily_tokens=None)
    # the 0 stays in budget.json, so a turn limit in agent.json stays removed too
    assert read_json(agent.budget_json) == {
        "schema_version": 1,
        "daily_tokens": 500,
        "turn_tokens": 0,
    }
    assert budget.limits(a) == {"daily_tokens": 500}
    assert _events(agent, "budget_set") == [
        {"daily_tokens": 500, "turn_tokens": 50},
        {"turn_tokens": 0},
    ]


def test_set_limits_with_nothing_to_change_writes_nothing(agent):
    a = Agent(agent)
    budget.set_limits(a, daily_tokens=None, bogus_tokens=5)
    assert not agent.budget_json.exists()
    assert _events(agent, "budget_set") == []


def test_zero_removes_a_limit_that_agent_json_sets(agent):
    a = Agent(agent)
    _identity_budget(agent, turn_tokens=100)
    budget.set_limits(a, turn_tokens=0)
    assert budget.limits(a) == {}


def test_family_usage_counts_children_touched_today_only(tmp_path):
    """A child's tokens count toward its parent's day; a child untouched since midnight (an old
    archive) is not even read, so the check does not grow with the children an agent ever had."""
    import json
    import os

    from holon.home.init import init_home

    parent = init_home(str(tmp_path / "p"), "p")
    child = init_home(str(parent.children_dir / "p.c-1"), "p.c-1")
    state = json.loads(child.state_json.read_text())
    state["token_usage_by_day"] = {budget.today(): 500}
    child.state_json.write_text(json.dumps(state))
    assert budget.family_usage_today(parent) == 500
    os.utime(child.state_json, (0, 0))
    assert budget.family_usage_today(parent) == 0

"""`holon model show|set|clear|budget|summaries` in process: the model-state document, text
form, and bad refs or budgets that leave the agent's state untouched."""

from __future__ import annotations

import json

from cmd_checks import fails, ok, ok_json, usage_error

from holon.cli.model import model_group
from holon.home.init import DEFAULT_DAILY_TOKENS

KEYS = {
    "agent_id",
    "source",
    "runtime_default_model",
    "effective_model",
    "effective_fallback_models",
    "override_model",
    "budget",
}


def test_show_json_and_text_follow_the_environment(agent, monkeypatch):
    doc = ok_json(model_group, "show", "a", "--json")
    assert set(doc) == KEYS and doc["effective_model"] is None
    assert doc["budget"] == {"daily_tokens": DEFAULT_DAILY_TOKENS}  # a new agent's default
    assert ok(model_group, "show", "a").stdout.splitlines() == [
        "effective: (none) (runtime_default)",
        "default:   (none)",
        "fallbacks: (none)",
        f"budget:    daily_tokens={DEFAULT_DAILY_TOKENS}",
    ]
    monkeypatch.setenv("HOLON_MODEL", "openai/gpt-x")
    monkeypatch.setenv("HOLON_FALLBACK_MODELS", "anthropic/c1, scripted/s.jsonl")
    doc = ok_json(model_group, "show", "a", "--json")
    assert doc["effective_model"] == doc["runtime_default_model"] == "openai/gpt-x"
    assert doc["effective_fallback_models"] == ["anthropic/c1", "scripted/s.jsonl"]
    assert "fallbacks: anthropic/c1, scripted/s.jsonl" in ok(model_group, "show", "a").stdout


def test_set_then_clear_override(agent, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", "openai/gpt-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # set checks the ref as prompt --model
    doc = ok_json(model_group, "set", "a", "anthropic/claude-x", "--json")
    assert doc["source"] == "agent_override" and doc["override_model"] == "anthropic/claude-x"
    assert doc["effective_model"] == "anthropic/claude-x"
    assert ok_json(model_group, "show", "a", "--json") == doc  # persisted
    assert ok(model_group, "clear", "a").stdout.startswith("effective: openai/gpt-x (")
    doc = ok_json(model_group, "show", "a", "--json")
    assert doc["override_model"] is None and doc["source"] == "runtime_default"


def test_budget_set_show_and_remove(agent):
    doc = ok_json(
        model_group, "budget", "a", "--daily-tokens", "1000", "--turn-tokens", "50", "--json"
    )
    assert doc["budget"] == {"daily_tokens": 1000, "turn_tokens": 50}
    assert "budget:    daily_tokens=1000, turn_tokens=50" in ok(model_group, "show", "a").stdout
    assert ok_json(model_group, "budget", "a", "--json")["budget"] == doc["budget"]  # show only
    doc = ok_json(model_group, "budget", "a", "--daily-tokens", "0", "--json")
    assert doc["budget"] == {"turn_tokens": 50}


def test_bad_refs_and_budgets_change_nothing(agent):
    before = agent.state_json.read_text()
    _, err = fails("model", "set", "a", "nonsense", code=2, kind="invalid_model_ref")
    assert "nonsense" in err
    fails("model", "set", "a", "nosuch/x", code=2, kind="unknown_provider")
    fails("model", "set", "a", "anthropic/claude-x", code=2, kind="missing_credentials")
    fails("model", "set", "a", "scripted/no/such/script.jsonl", code=2, kind="missing_script")
    usage_error(model_group, "budget", "a", "--daily-tokens", "-1")
    usage_error(model_group, "budget", "a", "--turn-tokens", "many")
    assert json.loads(agent.state_json.read_text()) == json.loads(before)
    assert not agent.budget_json.exists()
    assert ok_json(model_group, "show", "a", "--json")["override_model"] is None


def test_unknown_agent(agent):
    for args in (
        ["show", "nobody"],
        ["set", "nobody", "openai/x"],
        ["clear", "nobody"],
        ["budget", "nobody", "--turn-tokens", "5"],
    ):
        fails("model", *args, code=2, kind="unknown_agent")


def test_summaries_off_by_default_then_on_and_off(agent):
    assert ok(model_group, "summaries", "a").stdout == "model summaries: off\n"
    doc = ok_json(model_group, "summaries", "a", "on", "--json")
    assert doc == {"agent_id": "a", "model_summaries": True, "pending": []}
    assert json.loads(agent.settings_json.read_text())["model_summaries"] is True
    assert ok(model_group, "summaries", "a").stdout == "model summaries: on\n"
    assert ok(model_group, "summaries", "a", "off").stdout == "model summaries: off\n"
    usage_error(model_group, "summaries", "a", "maybe")

"""`holon debug prompt`: the next request with its manifest, human and JSON; clear errors."""

from __future__ import annotations

from cmd_checks import fails, ok, ok_json

from holon.cli.debug import prompt_cmd


def test_debug_prompt_prints_the_manifest_then_the_request(agent, script):
    model = script({"text": "unused"})
    out = ok(prompt_cmd, "a", "--model", model).stdout
    assert out.startswith("agent:       a (")
    assert "prompt budget" in out and "blocks:" in out
    assert out.index("=== system: policy ===") < out.index("=== system: environment ===")
    assert "=== tools: " in out


def test_debug_prompt_json_has_manifest_and_request(agent, script):
    model = script({"text": "unused"})
    doc = ok_json(prompt_cmd, "a", "--json", "--model", model)
    manifest = doc["manifest"]
    assert {b["name"] for b in manifest["blocks"]} >= {
        "policy",
        "environment",
        "tools",
        "episodes",
        "conversation",
        "current_turn",
    }
    assert manifest["prompt_cache_key"].startswith("holon-a-")
    assert manifest["estimated_tokens"] <= manifest["prompt_budget"]
    assert doc["request"]["model_ref"] == model and doc["request"]["conversation"] == []
    assert doc["execution_root"] == str(agent.root) and doc["workspace_id"] == "agent_home"
    assert {s["kind"] for s in doc["instruction_sources"]} >= {"agent"}


def test_debug_prompt_without_a_model_is_a_usage_error(agent):
    fails("debug", "prompt", "a", code=2, kind="no_model_configured")


def test_debug_prompt_of_an_unknown_agent_fails_cleanly(agent):
    fails("debug", "prompt", "nobody", code=2, kind="unknown_agent")

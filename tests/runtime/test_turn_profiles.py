"""A turn of a private child through the real CLI: its request offers only its profile's tools,
and a withheld tool the model calls anyway comes back as `unsupported_agent_profile_capability`
with nothing run (holon.agent.profiles, holon.tools.registry.call)."""

from __future__ import annotations

import json

from helpers import REPO, run, subprocess_env

CHILD = {
    "kind": "child",
    "visibility": "private",
    "ownership": "parent_supervised",
    "profile_preset": "private_child",
    "lineage_parent_agent_id": "parent",
}


def _make_child(agent) -> None:
    ident = json.loads(agent.agent_json.read_text())
    agent.agent_json.write_text(json.dumps({**ident, **CHILD}))


def _request_tools(model: str, env=None) -> list[str]:
    proc = run("debug", "prompt", "a", "--json", "--model", model, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["request"]["tools"]


def _entries(env=None) -> list[dict]:
    return [json.loads(x) for x in run("transcript", "a", "--jsonl", env=env).stdout.splitlines()]


def test_the_childs_request_lacks_the_workspace_tools(agent, script):
    """Its NotifyOperator stays (routed to its parent, holon.tasks.child.childnotify)."""
    model = script({"text": "ok"})
    public = _request_tools(model)
    assert "UseWorkspace" in public and "ExecCommand" in public
    _make_child(agent)
    child = _request_tools(model)
    assert "UseWorkspace" not in child and "DetachWorkspace" not in child
    assert set(child) == set(public) - {"UseWorkspace", "DetachWorkspace"}


def test_a_childs_use_workspace_call_is_refused_and_runs_nothing(agent, script, tmp_path):
    _make_child(agent)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model = script(
        {"tool_calls": [{"name": "UseWorkspace", "arguments": {"path": str(elsewhere)}}]},
        {"text": "Stayed where my parent put me."},
    )
    proc = run("prompt", "a", "do it", "--json", "--model", model)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["final_text"] == "Stayed where my parent put me."
    (result,) = [e["data"] for e in _entries() if e["kind"] == "tool_result"]
    error = result["envelope"]["error"]
    assert error["kind"] == "unsupported_agent_profile_capability"
    assert "UseWorkspace" in error["message"] and "private_child" in error["message"]
    details = error["details"]
    assert (details["tool_name"], details["profile_preset"]) == ("UseWorkspace", "private_child")
    assert "ExecCommand" in details["available"] and "UseWorkspace" not in details["available"]
    assert "parent" in error["recovery_hint"]
    status = json.loads(run("status", "a", "--json").stdout)
    assert str(elsewhere) not in json.dumps(status)  # the binding never changed


def test_a_plugin_tool_is_public_only(agent, script, tmp_path):
    fx = tmp_path / "fx"
    env = subprocess_env(
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine",
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
        SIDEFX_FILE=str(fx),
    )
    model = script(
        {"tool_calls": [{"name": "AppendLine", "arguments": {"line": "x"}}]}, {"text": "done"}
    )
    assert "AppendLine" in _request_tools(model, env)
    _make_child(agent)
    assert "AppendLine" not in _request_tools(model, env)
    proc = run("prompt", "a", "go", "--model", model, env=env)
    assert proc.returncode == 0, proc.stderr
    (result,) = [e["data"] for e in _entries(env) if e["kind"] == "tool_result"]
    assert result["envelope"]["error"]["kind"] == "unsupported_agent_profile_capability"
    assert not fx.exists()  # the plugin never ran


def test_an_unknown_tool_stays_unknown_for_a_child(agent, script):
    _make_child(agent)
    model = script({"tool_calls": [{"name": "NoSuchTool", "arguments": {}}]}, {"text": "ok"})
    assert run("prompt", "a", "x", "--model", model).returncode == 0
    (result,) = [e["data"] for e in _entries() if e["kind"] == "tool_result"]
    assert result["envelope"]["error"]["kind"] == "unknown_tool"


def test_the_catalog_is_cached_per_preset():
    from holon.runtime.turn import context

    public, public_guidance = context.catalog("scripted/x", "public_named")
    child, child_guidance = context.catalog("scripted/x", "private_child")
    assert context.catalog("scripted/x", "private_child")[0] is child  # built once per process
    assert context.catalog("scripted/x", "public_named")[0] is public
    assert public.digest != child.digest
    assert "UseWorkspace" in {d.name for d in public.defs}
    assert "UseWorkspace" not in {d.name for d in child.defs}
    assert set(child_guidance) <= set(public_guidance)

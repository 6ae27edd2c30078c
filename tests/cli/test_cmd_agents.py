"""`holon init` and `holon agents` in process: JSON shapes, listing, fail-closed creation."""

from __future__ import annotations

import json

from cmd_checks import fails, ok, ok_json

from holon.cli.agents import agents_cmd, init_cmd


def test_init_json_and_text(holon_env, tmp_path):
    doc = ok_json(init_cmd, "--agent-id", "alpha", "--json")
    assert doc == {"agent_id": "alpha", "home": str(holon_env / "agents" / "alpha")}
    assert (holon_env / "agents" / "alpha" / "AGENTS.md").is_file()
    target = tmp_path / "elsewhere" / "beta"
    out = ok(init_cmd, str(target)).stdout
    assert out == f"created agent beta at {target}\n"
    assert json.loads((target / ".holon" / "agent.json").read_text())["agent_id"] == "beta"


def test_agents_lists_registered_and_home_agents(holon_env, tmp_path):
    assert ok_json(agents_cmd, "--json") == []
    assert ok(agents_cmd).stdout == ""
    ok(init_cmd, "--agent-id", "a")
    ok(init_cmd, str(tmp_path / "b"))
    rows = ok_json(agents_cmd, "--json")
    assert sorted(r["agent_id"] for r in rows) == ["a", "b"]
    for r in rows:
        assert set(r) == {"agent_id", "status", "queue_depth", "home"}
        assert r["status"] == "awake_idle" and r["queue_depth"] == 0
    text = ok(agents_cmd).stdout.splitlines()
    expected = [f"{r['agent_id']}\tawake_idle\tqueue=0\t{r['home']}" for r in rows]
    assert sorted(text) == sorted(expected)


def test_agents_shows_status_and_queue_depth(agent):
    from holon.agent import admission, control

    admission.admit(agent, "enqueue", "system_tick", admission.text_body("x"))
    control.pause(agent)
    (row,) = ok_json(agents_cmd, "--json")
    assert (row["status"], row["queue_depth"]) == ("paused", 1)


def test_agents_hides_private_agents(agent):
    ident = json.loads(agent.agent_json.read_text())
    agent.agent_json.write_text(json.dumps({**ident, "visibility": "private"}))
    assert ok_json(agents_cmd, "--json") == []


def test_init_refuses_to_overwrite_and_bad_ids_leave_nothing(holon_env, tmp_path):
    ok(init_cmd, "--agent-id", "a")
    marker = holon_env / "agents" / "a" / "AGENTS.md"
    marker.write_text("mine")
    fails("init", "--agent-id", "a", code=2, kind="already_exists")
    assert marker.read_text() == "mine"
    fails("init", "--agent-id", "../evil", code=2, kind="invalid_agent_id")
    fails("init", str(tmp_path / "x"), "--template", "no-such", code=2, kind="unknown_template")
    assert not (tmp_path / "x").exists() and not (tmp_path / "evil").exists()
    assert [r["agent_id"] for r in ok_json(agents_cmd, "--json")] == ["a"]

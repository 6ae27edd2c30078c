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
    empty = ok(agents_cmd).stdout
    assert (
        empty.startswith("no agents (private ones show with --all) in ") and "holon init" in empty
    )
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


def _break_some(holon_env, tmp_path):
    """Agents a (healthy), b (registered elsewhere, then deleted) and c (state.json holds a merge
    conflict marker)."""
    import shutil

    ok(init_cmd, "--agent-id", "a")
    ok(init_cmd, str(tmp_path / "b"))
    ok(init_cmd, "--agent-id", "c")
    shutil.rmtree(tmp_path / "b")
    state = holon_env / "agents" / "c" / ".holon" / "state.json"
    state.write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n")
    return state


def test_agents_lists_broken_and_missing_homes_and_succeeds(holon_env, tmp_path):
    state = _break_some(holon_env, tmp_path)
    rows = ok_json(agents_cmd, "--json")
    assert [(r["agent_id"], r["status"]) for r in rows] == [
        ("a", "awake_idle"),
        ("b", "missing"),
        ("c", "broken"),
    ]
    assert set(rows[0]) == {"agent_id", "status", "queue_depth", "home"}
    assert rows[1] == {
        "agent_id": "b",
        "status": "missing",
        "queue_depth": None,
        "home": str(tmp_path / "b"),
        "problem": "the registered home no longer exists",
        "file": str(tmp_path / "b"),
    }
    assert rows[2]["file"] == str(state) and rows[2]["queue_depth"] == 0
    assert rows[2]["problem"] == "state.json is not valid JSON (Expecting value at line 1)"
    assert ok_json(agents_cmd, "list", "--json") == rows
    text = ok(agents_cmd).stdout.splitlines()
    assert (
        text[1] == f"b\tmissing\tqueue=-\t{tmp_path / 'b'}\t{rows[1]['problem']}: {tmp_path / 'b'}"
    )
    assert text[2].startswith("c\tbroken\tqueue=0\t") and text[2].endswith(f": {state}")


def test_broken_agents_through_the_real_entry_point(holon_env, tmp_path, holon):
    _break_some(holon_env, tmp_path)
    (holon_env / "agents" / "d" / ".holon").mkdir(parents=True)  # agent.json gone
    (holon_env / "agents" / "e").mkdir()  # not a home at all: not listed
    proc = holon("agents")
    assert proc.returncode == 0 and proc.stderr == ""
    assert [ln.split("\t")[:2] for ln in proc.stdout.splitlines()] == [
        ["a", "awake_idle"],
        ["b", "missing"],
        ["c", "broken"],
        ["d", "broken"],
    ]
    assert "agent.json is missing" in proc.stdout.splitlines()[3]


def test_agents_with_a_corrupt_registry_still_lists_homes_under_agents(holon_env):
    ok(init_cmd, "--agent-id", "a")
    (holon_env / "registry.json").write_text("{")
    rows = ok_json(agents_cmd, "--json")
    assert [(r["agent_id"], r["status"]) for r in rows] == [(None, "broken"), ("a", "awake_idle")]
    assert rows[0]["file"] == str(holon_env / "registry.json")
    assert ok(agents_cmd).stdout.startswith("-\tbroken\tqueue=-\t")


def test_agents_json_of_a_corrupt_agent_json(holon_env):
    ok(init_cmd, "--agent-id", "a")
    (holon_env / "agents" / "a" / ".holon" / "agent.json").write_bytes(b'{"agent_id": "\xc3\x28"}')
    (row,) = ok_json(agents_cmd, "--json")
    assert (row["status"], row["problem"]) == ("broken", "agent.json is not valid UTF-8")


def test_forget_unregisters_and_keeps_the_files(holon_env, tmp_path):
    ok(init_cmd, str(tmp_path / "b"))
    marker = tmp_path / "b" / "AGENTS.md"
    assert ok(agents_cmd, "forget", "b").stdout == (
        f"forgot agent b; its home {tmp_path / 'b'} was not touched\n"
    )
    assert marker.is_file() and ok_json(agents_cmd, "--json") == []
    assert json.loads((holon_env / "registry.json").read_text())["agents"] == {}
    ok(init_cmd, str(tmp_path / "c"))
    doc = ok_json(agents_cmd, "forget", "c", "--json")
    assert doc == {"agent_id": "c", "home": str(tmp_path / "c"), "forgotten": True}


def test_forget_a_deleted_home_clears_the_listing(holon_env, tmp_path):
    _break_some(holon_env, tmp_path)
    ok(agents_cmd, "forget", "b")
    assert [r["agent_id"] for r in ok_json(agents_cmd, "--json")] == ["a", "c"]


def test_forget_refuses_what_is_not_registered(holon_env):
    _, err = fails("agents", "forget", "nobody", code=2, kind="not_registered")
    assert "no registry entry for 'nobody'" in err
    ok(init_cmd, "--agent-id", "a")
    _, err = fails("agents", "forget", "a", code=2, kind="not_registered")
    assert f"lives in {holon_env / 'agents' / 'a'}" in err and "move that directory" in err
    assert [r["agent_id"] for r in ok_json(agents_cmd, "--json")] == ["a"]


def test_agents_help_lists_its_subcommands(holon):
    out = holon("agents", "--help").stdout
    assert "Usage: holon agents [OPTIONS] [COMMAND] [ARGS]..." in out
    assert "forget" in out and "list" in out and "--json" in out

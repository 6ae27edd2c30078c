"""Profiles and identity at the CLI: `holon tool list AGENT`, a refused `holon tool call`,
`holon agents --all` and the identity in `holon status AGENT --json`."""

from __future__ import annotations

import json

from cmd_checks import fails, invoke, ok, ok_json

from holon.cli.agents import agents_cmd
from holon.cli.inspect import status_cmd
from holon.cli.tool import tool_group
from holon.tools import registry

CHILD = {
    "kind": "child",
    "visibility": "private",
    "ownership": "parent_supervised",
    "profile_preset": "private_child",
    "lineage_parent_agent_id": "p",
}


def _make_child(agent, **fields) -> None:
    ident = json.loads(agent.agent_json.read_text())
    agent.agent_json.write_text(json.dumps({**ident, **CHILD, **fields}))


def test_tool_list_of_an_agent_is_its_profiles_catalog(agent):
    every = [t.name for t in registry.all_tools()]
    assert [t["name"] for t in ok_json(tool_group, "list", "a", "--json")] == every
    _make_child(agent)
    child = ok_json(tool_group, "list", "a", "--json")
    withheld = {"UseWorkspace", "DetachWorkspace"}
    assert [t["name"] for t in child] == [n for n in every if n not in withheld]
    lines = ok(tool_group, "list", "a").stdout.splitlines()
    assert [line.split()[0] for line in lines] == [t["name"] for t in child]
    assert len(ok_json(tool_group, "list", "--json")) == len(every)  # the global one is unchanged


def test_tool_list_of_an_unknown_or_corrupt_agent(agent):
    fails("tool", "list", "nobody", code=2, kind="unknown_agent")
    _make_child(agent, profile_preset="root_admin")
    _, err = fails("tool", "list", "a", code=1, kind="corrupt_state")
    assert "profile_preset" in err and "root_admin" in err


def test_tool_call_outside_the_profile_is_refused_and_runs_nothing(agent):
    _make_child(agent)
    result = invoke(tool_group, "call", "a", "UseWorkspace", "--input", '{"path": "/"}')
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "unsupported_agent_profile_capability"
    assert error["details"]["profile_preset"] == "private_child"
    assert error["details"]["tool_name"] == "UseWorkspace" and error["recovery_hint"]
    assert (
        not (agent.dot / "workspace.json").exists()
        or '"/"' not in (agent.dot / "workspace.json").read_text()
    )  # nothing ran
    env = ok_json(tool_group, "call", "a", "ExecCommand", "--input", '{"cmd": "echo in"}')
    assert env["status"] == "success"  # what the profile offers still runs


def test_agents_all_lists_private_agents_with_their_identity(agent, holon_env):
    from holon.home.init import init_home

    child = init_home(None, "kid")
    _make_child(child)
    assert [r["agent_id"] for r in ok_json(agents_cmd, "--json")] == ["a"]
    rows = ok_json(agents_cmd, "--all", "--json")
    assert [r["agent_id"] for r in rows] == ["a", "kid"]
    assert {k: rows[1][k] for k in CHILD if k != "profile_preset"} == {
        k: v for k, v in CHILD.items() if k != "profile_preset"
    }
    assert (rows[0]["visibility"], rows[0]["kind"], rows[0]["lineage_parent_agent_id"]) == (
        "public",
        "named",
        None,
    )
    assert ok_json(agents_cmd, "list", "--all", "--json") == rows
    text = ok(agents_cmd, "--all").stdout.splitlines()
    assert text == [
        f"a\tawake_idle\tqueue=0\tpublic/named\towner=-\t{agent.root}",
        f"kid\tawake_idle\tqueue=0\tprivate/child\towner=p\t{child.root}",
    ]


def test_agents_all_lists_a_broken_home_without_identity(agent):
    agent.agent_json.write_text("{broken")
    (row,) = ok_json(agents_cmd, "--all", "--json")
    assert row["problem"] and row["visibility"] is None and row["kind"] is None


def test_status_json_shows_identity(agent):
    ident = ok_json(status_cmd, "a", "--json")["identity"]
    assert ident == {
        "agent_id": "a",
        "agent_home": str(agent.root),
        "kind": "named",
        "visibility": "public",
        "ownership": "self_owned",
        "profile_preset": "public_named",
        "lineage_parent_agent_id": None,
    }
    _make_child(agent)
    ident = ok_json(status_cmd, "a", "--json")["identity"]
    assert ident == {"agent_id": "a", "agent_home": str(agent.root)} | CHILD

"""UseWorkspace and DetachWorkspace through the tool registry: inputs, the binding that every
later call follows (ApplyPatch roots, ExecCommand's cwd), and the home's memory still writable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import make_repo

from holon.agent import workspaces
from holon.agent.handle import Agent
from holon.runtime.turn.context import tool_context
from holon.sandbox import policy
from holon.tools import registry


def call(agent, name: str, **args):
    """One call in a fresh tool context, as a turn makes one per call."""
    out = registry.call(tool_context(Agent(agent)), name, args)
    return out.envelope


def allowed_repo(agent, path: Path) -> Path:
    """A repository the operator attached (`holon workspace use`, then back home): the agent
    may bind it itself."""
    repo = make_repo(path)
    workspaces.use(Agent(agent), path=str(repo))
    workspaces.use(Agent(agent), workspace="agent_home")
    return repo


def test_a_directory_outside_what_the_sandbox_allows_is_the_operators_to_bind(agent, tmp_path):
    """UseWorkspace cannot widen the agent's own confinement: a directory its commands may not
    write, and holon's own state, are refused; once the operator attached one, the model may
    bind it again."""
    repo = make_repo(tmp_path / "projects" / "repo")
    env = call(agent, "UseWorkspace", path=str(repo))
    assert env["error"]["kind"] == "workspace_not_allowed" and "holon workspace use" in str(env)
    assert json.loads(agent.state_json.read_text())["active_workspace_id"] == "agent_home"
    for reserved in (tmp_path, agent.dot, agent.root.parent, Path("/")):
        policy.write(agent, policy.Policy(mode="full-access"))
        env = call(agent, "UseWorkspace", path=str(reserved))
        assert env["error"]["kind"] == "reserved_workspace_path", (reserved, env)
    policy.write(agent, policy.Policy(writable_roots=(str(repo.parent),)))
    assert call(agent, "UseWorkspace", path=str(repo))["result"]["workspace_id"]
    call(agent, "UseWorkspace", workspace_id="agent_home")
    policy.write(agent, policy.Policy())
    other = make_repo(tmp_path / "elsewhere" / "other")
    assert call(agent, "UseWorkspace", path=str(other))["error"]["kind"] == "workspace_not_allowed"
    workspaces.use(Agent(agent), path=str(other))  # the operator's `holon workspace use`
    workspaces.use(Agent(agent), workspace="agent_home")
    env = call(agent, "UseWorkspace", path=str(other / "."))
    assert env["result"]["execution_root"] == str(other.resolve())


def test_exactly_one_of_path_or_workspace_id(agent, tmp_path):
    for args in ({}, {"path": str(tmp_path), "workspace_id": "agent_home"}):
        env = call(agent, "UseWorkspace", **args)
        assert env["error"]["kind"] == "invalid_tool_input", env
    env = call(agent, "UseWorkspace", workspace_id="agent_home", mode="isolated")
    assert env["error"]["kind"] == "invalid_tool_input"
    env = call(agent, "UseWorkspace", workspace_id="agent_home")
    assert env["result"]["execution_root"] == str(agent.root)


@pytest.mark.parametrize(
    "args,kind",
    [
        ({"path": "nope"}, "invalid_workspace_path"),
        ({"workspace_id": "ws_x_00000000"}, "unknown_workspace"),
        ({"path": ".", "cwd": "/"}, "invalid_cwd"),
    ],
)
def test_bad_bindings_are_tool_errors(agent, args, kind):
    env = call(agent, "UseWorkspace", **args)
    assert env["error"]["kind"] == kind and env["error"]["recovery_hint"]


def test_bound_tools_follow_the_workspace(agent, tmp_path):
    repo = allowed_repo(agent, tmp_path / "projects" / "repo")
    bound = call(agent, "UseWorkspace", path=str(repo))["result"]
    assert bound["execution_root"] == str(repo.resolve())
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+edited\n"
    assert call(agent, "ApplyPatch", patch=patch)["result"]
    assert (repo / "a.txt").read_text() == "edited\n"
    out = call(agent, "ExecCommand", cmd="pwd", login=False)
    assert out["result"]["stdout_preview"].strip() == str(repo.resolve()), out
    # the home's memory: an absolute path in the home; its .holon stays refused
    notes = agent.memory / "notes.md"
    add = f"--- /dev/null\n+++ {notes}\n@@ -0,0 +1 @@\n+remember\n"
    assert call(agent, "ApplyPatch", patch=add)["result"]
    assert notes.read_text() == "remember\n"
    bad = f"--- /dev/null\n+++ {agent.dot / 'x.json'}\n@@ -0,0 +1 @@\n+x\n"
    assert call(agent, "ApplyPatch", patch=bad)["error"]["kind"] == "sandbox_denied"
    outside = f"--- /dev/null\n+++ {tmp_path / 'elsewhere.txt'}\n@@ -0,0 +1 @@\n+x\n"
    assert call(agent, "ApplyPatch", patch=outside)["error"]["kind"] == "path_escape"


def test_detach_tool(agent, tmp_path):
    repo = allowed_repo(agent, tmp_path / "projects" / "repo")
    wid = call(agent, "UseWorkspace", path=str(repo), mode="isolated")["result"]["workspace_id"]
    tree = Path(Agent(agent).state().cwd)
    (tree / "wip.txt").write_text("wip\n")
    env = call(agent, "DetachWorkspace", workspace_id=wid)
    assert env["error"]["kind"] == "workspace_active"
    call(agent, "UseWorkspace", workspace_id="agent_home")
    env = call(agent, "DetachWorkspace", workspace_id=wid)
    assert "kept" in env["summary_text"] and (tree / "wip.txt").exists()
    assert env["result"]["worktree"]["changed_files"] == ["wip.txt"]
    assert call(agent, "DetachWorkspace", workspace_id="agent_home")["error"]["kind"] == (
        "cannot_detach_agent_home"
    )
    events = [json.loads(x)["kind"] for x in agent.events.read_text().splitlines()]
    assert "workspace_used" in events and "worktree_retained" in events


def test_sandboxed_commands_write_the_workspace_the_home_and_commit_in_a_worktree(agent, tmp_path):
    repo = allowed_repo(agent, tmp_path / "projects" / "repo")
    call(agent, "UseWorkspace", path=str(repo))
    memo = agent.memory / "cmd.md"
    out = call(agent, "ExecCommand", cmd=f"echo x > made.txt && echo y > {memo}", login=False)
    assert out["result"]["exit_status"] == 0, out
    assert (repo / "made.txt").exists() and memo.read_text() == "y\n"
    refused = call(agent, "ExecCommand", cmd=f"echo z > {agent.dot / 'z'}", login=False)
    assert refused["result"]["exit_status"] != 0 and not (agent.dot / "z").exists()
    call(agent, "UseWorkspace", workspace_id="agent_home")
    call(agent, "UseWorkspace", path=str(repo), mode="isolated", isolation_label="c")
    ident = "-c user.name=t -c user.email=t@t"
    cmd = f"echo w > w.txt && git add w.txt && git {ident} commit -q -m w && git log --oneline"
    out = call(agent, "ExecCommand", cmd=cmd, login=False)
    assert out["result"]["exit_status"] == 0, out
    assert not (repo / "w.txt").exists()  # the main checkout is unchanged


def test_both_tools_mutate_and_share_a_family():
    from holon.tools.workspace import DetachWorkspace, UseWorkspace

    for tool in (UseWorkspace, DetachWorkspace):
        assert tool.mutates and tool.family == "workspace"
    assert "agent_home" in UseWorkspace.guidance

"""holon.agent.workspaces: the execution binding in workspace.json, kept in step with the state;
anchors, cwd, detach rules, occupancy, a corrupt file and a crash while creating a worktree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import git, make_repo
from helpers import run, subprocess_env

from holon import paths
from holon.agent import preflight, workspaces, worktree
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home.init import init_home
from holon.runtime.turn import context


def kind_of(fn, *args, **kw) -> str:
    with pytest.raises(HolonError) as exc:
        fn(*args, **kw)
    return exc.value.kind


def test_the_agent_home_is_active_until_another_is_used(agent):
    a = Agent(agent)
    bound = workspaces.binding(a)
    assert bound["workspace_id"] == "agent_home" and bound["execution_root"] == str(agent.root)
    assert context.execution_root(a) == (agent.root, agent.root)


def test_a_path_in_a_repository_binds_its_main_checkout(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    a = Agent(agent)
    bound = workspaces.use(a, path=str(repo / "sub"))
    wid = bound["workspace_id"]
    assert wid == workspaces.workspace_id(repo.resolve()) and wid.startswith("ws_repo_")
    assert bound["workspace_anchor"] == bound["execution_root"] == str(repo.resolve())
    assert bound["cwd"] == str((repo / "sub").resolve())
    assert bound["projection_kind"] == "canonical_root" and bound["mode"] == "direct"
    assert context.execution_root(a) == (repo.resolve(), (repo / "sub").resolve())
    state = a.state()
    assert state.active_workspace_id == wid and state.attached_workspaces == [wid]
    assert state.cwd == bound["cwd"]
    assert json.loads(agent.workspace_json.read_text())["active"] == bound
    # the same repository again: the same id; agent_home back
    assert workspaces.use(a, path=str(repo))["workspace_id"] == wid
    home = workspaces.use(a, workspace="agent_home")
    assert home["execution_root"] == str(agent.root) and a.state().attached_workspaces == [wid]


def test_a_linked_worktree_keeps_the_parent_identity(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    worktree.create(repo, tmp_path / "linked", "side")
    bound = workspaces.use(Agent(agent), path=str(tmp_path / "linked"))
    assert bound["workspace_anchor"] == str(repo.resolve())
    assert bound["execution_root"] == str((tmp_path / "linked").resolve())
    assert bound["projection_kind"] == "git_worktree_root"


def test_a_plain_directory_is_its_own_anchor_and_cwd_stays_inside(agent, tmp_path):
    plain = tmp_path / "plain"
    (plain / "d").mkdir(parents=True)
    a = Agent(agent)
    bound = workspaces.use(a, path=str(plain), cwd="d")
    assert bound["workspace_anchor"] == str(plain.resolve()) and bound["cwd"].endswith("/d")
    assert kind_of(workspaces.use, a, path=str(plain), cwd="..") == "invalid_cwd"
    assert kind_of(workspaces.use, a, path=str(plain), cwd="/") == "invalid_cwd"
    assert kind_of(workspaces.use, a, path=str(tmp_path / "nope")) == "invalid_workspace_path"
    assert kind_of(workspaces.use, a, workspace="ws_nope_00000000") == "unknown_workspace"
    assert kind_of(workspaces.use, a, path=str(plain), mode="isolated") == "not_a_git_repository"
    assert kind_of(workspaces.use, a) == "invalid_input"


def test_detach_rules(agent, tmp_path):
    a = Agent(agent)
    plain = tmp_path / "plain"
    plain.mkdir()
    wid = workspaces.use(a, path=str(plain))["workspace_id"]
    assert kind_of(workspaces.detach, a, "agent_home") == "cannot_detach_agent_home"
    assert kind_of(workspaces.detach, a, wid) == "workspace_active"
    workspaces.use(a, workspace="agent_home")
    plain.rmdir()  # stale: its path is gone
    assert workspaces.detach(a, wid)["detached"] is True
    assert a.state().attached_workspaces == []
    assert kind_of(workspaces.detach, a, wid) == "unknown_workspace"


def test_isolated_worktree_is_kept_dirty_and_removed_clean(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    a = Agent(agent)
    bound = workspaces.use(a, path=str(repo), mode="isolated", label="try")
    tree = Path(bound["execution_root"])
    assert tree == paths.worktrees_dir() / "a" / "try"
    assert bound["worktree"]["branch"] == "holon/a/try" and bound["workspace_anchor"] == str(
        repo.resolve()
    )
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "holon/a/try"
    # used again by id: the same worktree
    assert workspaces.use(a, workspace=bound["workspace_id"], mode="isolated") == bound
    (tree / "wip.txt").write_text("wip\n")
    workspaces.use(a, workspace="agent_home")
    out = workspaces.detach(a, bound["workspace_id"])
    assert out["worktree"]["retained_reason"] == "uncommitted_changes"
    assert (tree / "wip.txt").exists()
    kept = workspaces.listing(a)["retained"]
    assert kept[0]["changed_files"] == ["wip.txt"]
    events = [json.loads(x) for x in agent.events.read_text().splitlines()]
    assert any(e["kind"] == "worktree_retained" for e in events)
    # spec, DetachWorkspace (control plane): it never deletes the workspace directory, so a
    # clean worktree stays too, with its branch, listed as retained for explicit cleanup
    bound = workspaces.use(a, path=str(repo), mode="isolated", label="clean")
    workspaces.use(a, workspace="agent_home")
    out = workspaces.detach(a, bound["workspace_id"])
    assert not out["worktree"]["removed"] and out["worktree"]["retained_reason"] == "detached"
    assert Path(bound["execution_root"]).is_dir()
    assert git(repo, "branch", "--list", "holon/a/clean") != ""
    kept = workspaces.listing(a)["retained"]
    assert [k["reason"] for k in kept] == ["uncommitted_changes", "detached"]


def test_another_agents_worktree_is_occupied(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    tree = workspaces.use(Agent(agent), path=str(repo), mode="isolated")["execution_root"]
    other = Agent(init_home(None, "b"))
    assert kind_of(workspaces.use, other, path=tree) == "workspace_occupied"
    assert workspaces.use(Agent(agent), path=tree)["execution_root"] == tree


def test_a_corrupt_file_is_corrupt_state(agent):
    a = Agent(agent)
    for bad in ("{not json", '{"active": 3}', '{"active": {"workspace_id": "x"}}', "[]"):
        agent.workspace_json.write_text(bad)
        assert kind_of(preflight.workspace, a) == "corrupt_state"
        assert kind_of(context.execution_root, a) == "corrupt_state"


@pytest.mark.parametrize("step", ["workspace.worktree.add", "workspace.worktree.ready"])
def test_a_kill_while_creating_a_worktree_is_rolled_back(holon_env, tmp_path, step):
    home = init_home(None, "a")
    repo = make_repo(tmp_path / "repo")
    env = subprocess_env(HOLON_CRASH_AT=f"{step}:1")
    proc = run("workspace", "use", "a", str(repo), "--isolated", "--label", "x", env=env)
    assert proc.returncode == -9, proc.stderr
    doc = json.loads(home.workspace_json.read_text())
    (entry,) = doc["attached"].values()
    assert entry["worktree"]["state"] == "creating" and "active" not in doc
    assert run("workspace", "use", "a", "--id", "agent_home").returncode == 0
    doc = json.loads(home.workspace_json.read_text())
    (entry,) = doc["attached"].values()
    assert entry["worktree"] is None
    assert not (paths.worktrees_dir() / "a" / "x").exists()
    assert git(repo, "branch", "--list", "holon/a/x") == ""
    assert "worktrees/a/x" not in git(repo, "worktree", "list")
    # and it can be made again
    assert run("workspace", "use", "a", str(repo), "--isolated", "--label", "x").returncode == 0
    assert (paths.worktrees_dir() / "a" / "x" / "a.txt").exists()

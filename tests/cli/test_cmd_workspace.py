"""`holon workspace list|use|detach`: through the real entry point; busy while a turn runs; a
corrupt workspace.json is a clean `corrupt_state` error."""

from __future__ import annotations

import json
from pathlib import Path

from gitrepo import make_repo
from helpers import run

from holon.store.locks import FileLock  # noqa: E402


def test_use_list_detach(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    proc = run("workspace", "use", "a", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    bound = json.loads(proc.stdout)
    wid = bound["workspace_id"]
    listed = json.loads(run("workspace", "list", "a", "--json").stdout)
    assert [r["workspace_id"] for r in listed["attached"]] == ["agent_home", wid]
    assert listed["active"]["workspace_id"] == wid
    text = run("workspace", "list", "a").stdout
    assert f"* {wid}  {repo.resolve()}" in text
    proc = run("workspace", "detach", "a", wid)
    assert proc.returncode == 2 and "holon: workspace_active:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert run("workspace", "use", "a", "--id", "agent_home").returncode == 0
    proc = run("workspace", "detach", "a", wid)
    assert proc.returncode == 0 and proc.stdout == f"detached {wid}\n"


def test_isolated_with_label_and_kept_worktree(agent, tmp_path):
    repo = make_repo(tmp_path / "repo")
    proc = run("workspace", "use", "a", str(repo), "--isolated", "--label", "exp", "--json")
    bound = json.loads(proc.stdout)
    tree = Path(bound["execution_root"])
    assert bound["worktree"]["branch"] == "holon/a/exp" and tree.name == "exp"
    (tree / "a.txt").write_text("dirty\n")
    run("workspace", "use", "a", "--id", "agent_home")
    out = run("workspace", "detach", "a", bound["workspace_id"]).stdout
    assert f"kept worktree {tree}: uncommitted_changes (changed: a.txt)" in out
    assert (repo / "a.txt").read_text() == "a\n"
    assert "retained worktree" in run("workspace", "list", "a").stdout


def test_usage_and_errors(agent, tmp_path):
    proc = run("workspace", "use", "a")
    assert proc.returncode == 2 and "holon: invalid_input:" in proc.stderr
    (tmp_path / "proj").mkdir()
    proc = run("workspace", "use", "a", str(tmp_path / "proj"), "--cwd", "/")
    assert proc.returncode == 2 and "holon: invalid_cwd:" in proc.stderr
    for reserved in (tmp_path, agent.dot, "/"):  # holon's own state, or a directory holding it
        proc = run("workspace", "use", "a", str(reserved))
        assert proc.returncode == 2 and "holon: reserved_workspace_path:" in proc.stderr
    proc = run("workspace", "detach", "a", "agent_home")
    assert "holon: cannot_detach_agent_home:" in proc.stderr
    agent.workspace_json.write_text("{broken")
    for args in (("list", "a"), ("use", "a", "--id", "agent_home")):
        proc = run("workspace", *args)
        assert proc.returncode == 1 and "holon: corrupt_state:" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_running_turn_makes_the_agent_busy(agent, tmp_path):
    lock = FileLock(agent.turn_lock)
    lock.acquire(blocking=False)
    try:
        proc = run("workspace", "use", "a", str(tmp_path))
    finally:
        lock.release()
    assert proc.returncode == 1 and proc.stderr.startswith("holon: busy:"), proc.stderr
    assert not agent.workspace_json.exists()


def test_list_in_process_shows_the_home(agent):
    from cmd_checks import ok

    from holon.cli.workspace import list_cmd

    out = ok(list_cmd, "a").stdout
    assert out.startswith(f"* agent_home  {agent.root}\n")
    assert f"active: agent_home (direct): root {agent.root}" in out


def test_a_public_named_spawn_inherits_the_attached_set_not_the_active_binding(agent, tmp_path):
    """The new agent gets what its creator had attached, as attached only: its own active
    workspace stays its home, no worktree is shared, and detaching there leaves the creator's."""
    plain = make_repo(tmp_path / "plain")
    isolated = make_repo(tmp_path / "iso")
    wid = json.loads(run("workspace", "use", "a", str(plain), "--json").stdout)["workspace_id"]
    iso = json.loads(run("workspace", "use", "a", str(isolated), "--isolated", "--json").stdout)
    spawn = {"preset": "public_named", "agent_id": "helper", "initial_message": "hi"}
    proc = run("tool", "call", "a", "SpawnAgent", "--input", json.dumps(spawn))
    assert proc.returncode == 0 and json.loads(proc.stdout)["result"] == {"agent_id": "helper"}
    mine = json.loads(run("workspace", "list", "a", "--json").stdout)
    theirs = json.loads(run("workspace", "list", "helper", "--json").stdout)
    assert (
        {r["workspace_id"] for r in theirs["attached"]}
        == {r["workspace_id"] for r in mine["attached"]}
        == {"agent_home", wid, iso["workspace_id"]}
    )
    assert theirs["active"]["workspace_id"] == "agent_home"  # never the creator's active one
    assert all(not r.get("worktree") for r in theirs["attached"])  # nor its worktree
    status = json.loads(run("status", "helper", "--json").stdout)
    assert status["identity"]["lineage_parent_agent_id"] == "a"
    assert run("workspace", "detach", "helper", wid).returncode == 0
    after = json.loads(run("workspace", "list", "a", "--json").stdout)
    assert wid in {r["workspace_id"] for r in after["attached"]}  # the creator keeps it

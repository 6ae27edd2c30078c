"""Code an agent's command plants in a repository (hook files, a hooks path, fsmonitor, filters
from the config, an include and a conditional include, textconv, an ssh command) never runs when
holon runs git there, through the real CLI: `holon tick --commit`, `holon workspace use
--isolated` and `detach`, and a scripted SpawnAgent with workspace_mode=worktree and the child's
cleanup; each operation still succeeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitplant import plant, prepare, ran, raw_git
from gitrepo import make_repo
from helpers import holon, init_agent, write_script


def committed(repo: Path) -> None:
    prepare(repo)
    raw_git(repo, "add", "-A")
    raw_git(repo, "commit", "-q", "-m", "attributes")


def git_home(agent: str) -> Path:
    home = init_agent(agent)
    raw_git(home, "init", "-q", "-b", "main")
    committed(home)
    return home


@pytest.fixture(autouse=True)
def identity(monkeypatch):
    for key, value in (("NAME", "t"), ("EMAIL", "t@example.invalid")):
        monkeypatch.setenv(f"GIT_AUTHOR_{key}", value)
        monkeypatch.setenv(f"GIT_COMMITTER_{key}", value)


@pytest.mark.parametrize("hooks_path", [False, True])
def test_tick_commit_runs_nothing_planted_in_the_home(tmp_path, hooks_path):
    home = git_home("a")
    plant(home, tmp_path / "marks", hooks_path=hooks_path)
    holon("model", "set", "a", write_script(tmp_path / "s.jsonl", [{"text": "Did the work."}]))
    holon("prompt", "a", "work", "--no-wait")
    holon("tick", "a", "--commit")
    assert ran(tmp_path / "marks") == []
    assert raw_git(home, "log", "-1", "--format=%s").stdout.strip() == "Did the work."
    assert raw_git(home, "show", "HEAD:a.txt").stdout == "a.txt changed\n"


def test_isolated_workspace_and_detach_run_nothing_planted(tmp_path):
    init_agent("a")
    repo = make_repo(tmp_path / "repo")
    committed(repo)
    plant(repo, tmp_path / "marks")
    used = json.loads(holon("workspace", "use", "a", str(repo), "--isolated", "--json").stdout)
    tree = Path(used["execution_root"])
    assert (tree / "c.txt").read_text() == "c.txt\n"  # checked out, no smudge filter
    holon("workspace", "use", "a", "--id", "agent_home")
    out = holon("workspace", "detach", "a", used["workspace_id"]).stdout
    # detach never deletes the directory (spec: DetachWorkspace); it looks at what the
    # worktree holds (git status: fsmonitor's moment) and keeps it, retained
    assert "kept worktree" in out and "changed: none" in out and tree.exists(), out
    assert ran(tmp_path / "marks") == []


def test_spawned_worktree_child_and_its_cleanup_run_nothing_planted(tmp_path):
    parent = git_home("p")
    plant(parent, tmp_path / "marks")
    spawn = {"initial_message": "look around", "workspace_mode": "worktree"}
    rounds = [{"tool_calls": [{"name": "SpawnAgent", "arguments": spawn}]}, {"text": "spawned"}]
    holon("model", "set", "p", write_script(tmp_path / "p.jsonl", [*rounds, {"text": "ok"}]))
    holon("prompt", "p", "delegate")
    (task,) = [json.loads(p.read_text()) for p in parent.glob(".holon/tasks/*/task.json")]
    child = task["child_agent_id"]
    holon("model", "set", child, write_script(tmp_path / "c.jsonl", [{"text": "looked"}]))
    holon("tick", "--all")
    (done,) = [json.loads(p.read_text()) for p in parent.glob(".holon/tasks/*/task.json")]
    assert done["status"] == "completed", done
    assert done["worktree"]["cleanup"]["removed"] is True
    assert ran(tmp_path / "marks") == []

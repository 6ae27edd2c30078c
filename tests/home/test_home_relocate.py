"""A copied or moved HOLON_HOME acts only on its own agents: registry paths inside it are
relative, old absolute entries are re-derived, and a registered home that no longer matches is
reported, never acted on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import run, subprocess_env

from holon.home import regsalvage, relocate


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and mtime: what "untouched" is compared by."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


def _ok(env, *args):
    proc = run(*args, env=env)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def _setup(tmp_path, script):
    orig = tmp_path / "orig"
    env = subprocess_env(HOLON_HOME=str(orig))
    _ok(env, "init", "--agent-id", "a")
    outside = tmp_path / "elsewhere" / "b"
    _ok(env, "init", "--agent-id", "b", str(outside))
    model = script(
        {"text": "first"},
        {"text": "", "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": "pwd"}}]},
        {"text": "second"},
        {"text": "third"},
    )
    _ok(env, "prompt", "a", "hello", "--model", model)
    return orig, outside, model


def test_a_copied_home_acts_only_on_itself(tmp_path, script):
    orig, _outside, model = _setup(tmp_path, script)
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(orig), str(copy)], check=True)
    state = copy / "agents" / "a" / ".holon" / "state.json"
    doc = json.loads(state.read_text())
    doc["cwd"] = str(orig / "agents" / "a" / "memory")  # a cwd the original's turns had set
    state.write_text(json.dumps(doc))
    before = _tree(orig)
    env = subprocess_env(HOLON_HOME=str(copy), HOLON_MODEL=model)
    _ok(env, "prompt", "a", "in the copy")
    _ok(env, "prompt", "a", "queued only", "--no-wait")
    _ok(env, "tick", "--all")
    listed = json.loads(_ok(env, "agents", "--json").stdout)
    ids = [a["agent_id"] for a in listed]
    assert sorted(ids) == ["a", "b"], listed
    by_id = {a["agent_id"]: a for a in listed}
    assert by_id["a"]["home"] == str(copy / "agents" / "a")
    doctor = run("doctor", "--json", env=env)
    assert doctor.returncode == 0 and str(orig) not in doctor.stdout, doctor.stdout
    assert _tree(orig) == before
    copied = (copy / "agents" / "a" / ".holon" / "ledger" / "messages.jsonl").read_text()
    assert "in the copy" in copied and "queued only" in copied
    ran = (copy / "agents" / "a" / ".holon" / "ledger" / "transcript.jsonl").read_text()
    ran = ran[ran.index("in the copy") :]  # the copy's own turns
    assert f"{copy}/agents/a" in ran and f"{orig}/agents/a" not in ran  # pwd ran in the copy


def test_an_old_absolute_registry_in_a_moved_home_is_re_derived(tmp_path, script):
    orig, _outside, model = _setup(tmp_path, script)
    reg = json.loads((orig / "registry.json").read_text())
    reg["agents"]["a"] = str(orig / "agents" / "a")  # as an older holon wrote it
    (orig / "registry.json").write_text(json.dumps(reg))
    moved = tmp_path / "moved"
    shutil.copytree(orig, moved, symlinks=True)
    before = _tree(orig)
    env = subprocess_env(HOLON_HOME=str(moved))
    _ok(env, "prompt", "a", "after the move", "--model", model)
    listed = json.loads(_ok(env, "agents", "--json").stdout)
    assert [a["home"] for a in listed if a["agent_id"] == "a"] == [str(moved / "agents" / "a")]
    assert _tree(orig) == before


def test_a_registered_home_that_no_longer_matches_is_reported(tmp_path, script):
    orig, outside, _model = _setup(tmp_path, script)
    agent_json = outside / ".holon" / "agent.json"
    data = json.loads(agent_json.read_text())
    data["agent_id"] = "other"
    agent_json.write_text(json.dumps(data))
    env = subprocess_env(HOLON_HOME=str(orig))
    listed = json.loads(run("agents", "--json", env=env).stdout)
    bad = [b for b in listed if b["agent_id"] == "b"]
    assert len(bad) == 1 and bad[0]["status"] == "broken", listed
    assert "other" in bad[0]["problem"], listed
    doctor = run("doctor", "--json", env=env)
    assert doctor.returncode != 0 and "other" in doctor.stdout
    refused = run("prompt", "b", "hi", "--no-wait", env=env)
    assert refused.returncode != 0 and "other" in refused.stderr


def test_doctor_repair_keeps_agents_outside_the_agents_directory(tmp_path, script):
    orig, outside, _model = _setup(tmp_path, script)
    text = (orig / "registry.json").read_text()
    (orig / "registry.json").write_text("<<<<<<< HEAD\n" + text)  # a bad merge
    env = subprocess_env(HOLON_HOME=str(orig))
    proc = run("doctor", "--repair", env=env)
    assert "kept from outside the agents directory: b" in proc.stdout, proc.stdout
    listed = json.loads(_ok(env, "agents", "--json").stdout)
    homes = {a["agent_id"]: a["home"] for a in listed}
    assert homes == {"a": str(orig / "agents" / "a"), "b": str(outside)}


def test_paths_inside_holon_home_are_stored_relative(holon_env, tmp_path):
    assert relocate.stored(holon_env / "agents" / "a") == "agents/a"
    assert relocate.stored(tmp_path / "out") == str(tmp_path / "out")
    assert relocate.stored(holon_env.parent / "holon-home2") == str(
        holon_env.parent / "holon-home2"
    )
    assert relocate.derived({"a": "agents/a"}) == {"a": str(holon_env / "agents" / "a")}
    assert relocate.derived({"b": str(tmp_path / "b")}) == {"b": str(tmp_path / "b")}


def test_salvage_keeps_only_homes_whose_agent_json_agrees(holon_env, tmp_path):
    env = subprocess_env(HOLON_HOME=str(holon_env))
    _ok(env, "init", "--agent-id", "b", str(tmp_path / "b"))
    bad = tmp_path / "registry.bad"
    bad.write_text(f'<<<<<<<\n"b": "{tmp_path / "b"}", "c": "{tmp_path / "b"}", "d": "/nope"')
    assert regsalvage.found(bad) == ({"b": str(tmp_path / "b")}, {})


def _absolute(doc, base: Path):
    """workspace.json as an older holon wrote it: every path absolute."""
    if isinstance(doc, dict):
        return {k: _absolute(v, base) for k, v in doc.items()}
    if isinstance(doc, str) and doc.startswith(("worktrees/", "agents/")):
        return str(base / doc)
    return doc


@pytest.mark.parametrize("older", [False, True], ids=["relative", "older-absolute"])
def test_a_copied_home_works_in_its_own_isolated_worktree(tmp_path, script, older):
    """An agent bound to an isolated worktree, its HOLON_HOME copied with `cp -a`: a turn in the
    copy runs its command in the copy's worktree, and the original's stays as it was."""
    from gitrepo import make_repo

    repo = make_repo(tmp_path / "project")  # outside HOLON_HOME: shared by both homes
    orig = tmp_path / "orig"
    env = subprocess_env(HOLON_HOME=str(orig))
    _ok(env, "init", "--agent-id", "a")
    bound = json.loads(_ok(env, "workspace", "use", "a", str(repo), "--isolated", "--json").stdout)
    tree = Path(bound["execution_root"])
    assert tree.parent.parent == orig / "worktrees", bound
    stored = (orig / "agents" / "a" / ".holon" / "workspace.json").read_text()
    assert str(orig) not in stored and str(repo) in stored, stored  # inside: relative
    rel = str(tree.relative_to(orig))
    doc = json.loads(stored)
    assert doc["active"]["worktree"]["path"] == doc["active"]["execution_root"] == rel, doc
    assert next(iter(doc["attached"].values()))["worktree"]["path"] == rel, doc
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(orig), str(copy)], check=True)
    if older:
        ws = copy / "agents" / "a" / ".holon" / "workspace.json"
        ws.write_text(json.dumps(_absolute(json.loads(ws.read_text()), orig)))
    before = _tree(orig)
    write = {"cmd": "echo from-the-copy > made.txt && pwd"}
    model = script(
        {"text": "", "tool_calls": [{"name": "ExecCommand", "arguments": write}]},
        {"text": "done"},
    )
    env = subprocess_env(HOLON_HOME=str(copy))
    _ok(env, "prompt", "a", "write it", "--model", model)
    mine = copy / tree.relative_to(orig)
    assert (mine / "made.txt").read_text() == "from-the-copy\n"
    assert not (tree / "made.txt").exists()
    assert _tree(orig) == before
    listed = json.loads(_ok(env, "workspace", "list", "a", "--json").stdout)
    assert listed["active"]["execution_root"] == str(mine), listed
    report = json.loads(run("doctor", "a", "--json", env=env).stdout)
    (shared,) = [f for a in report["agents"] for f in a["findings"] if f["check"] == "worktree"]
    assert shared["shared_with"] == str(tree) and shared["status"] == "warn", shared
    report = json.loads(
        run("doctor", "a", "--json", env=subprocess_env(HOLON_HOME=str(orig))).stdout
    )
    assert not [f for a in report["agents"] for f in a["findings"] if f["check"] == "worktree"]


def test_a_child_task_record_places_its_worktree_in_this_home(holon_env, tmp_path):
    """A child task record names its worktree and workspace relative to HOLON_HOME; one an older
    holon wrote absolutely in another HOLON_HOME (the original of a copy) is read as this one's."""
    orig, repo = tmp_path / "orig", str(tmp_path / "project")
    (holon_env / "worktrees" / "c" / "task").mkdir(parents=True)
    tree = {"path": str(orig / "worktrees" / "c" / "task"), "repo_anchor": repo, "branch": "b"}
    ws = {"workspace_id": "ws_x", "workspace_anchor": repo, "execution_root": repo, "cwd": repo}
    old = {"id": "task_1", "workspace": ws, "worktree": tree}
    here = relocate.child_task(old, to_store=False)
    assert here["worktree"]["path"] == str(holon_env / "worktrees" / "c" / "task")
    assert here["worktree"]["repo_anchor"] == repo and here["workspace"] == ws
    kept = relocate.child_task(here, to_store=True)
    assert kept["worktree"]["path"] == "worktrees/c/task" and kept["workspace"] == ws
    assert relocate.child_task(kept, to_store=False) == here
    assert old["worktree"]["path"] == str(orig / "worktrees" / "c" / "task")  # not changed

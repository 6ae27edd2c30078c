"""A public agent works in a git repository outside its home: bound by UseWorkspace in a scripted
turn, it edits a file with ApplyPatch and runs a command there; `holon debug prompt` shows the
repository's AGENTS.md (CLAUDE.md when there is none); isolated mode works on a branch of its own
in a real worktree and leaves the main checkout alone; `holon run --workspace` binds first."""

from __future__ import annotations

import json
from pathlib import Path

from gitrepo import git, make_repo
from helpers import init_agent, run, transcript, write_script


def call(name: str, i: int, **args) -> dict:
    return {"text": name, "tool_calls": [{"id": f"c{i}", "name": name, "arguments": args}]}


def results(home: Path) -> dict[str, dict]:
    """tool name -> its last result envelope in the transcript."""
    out = {}
    for entry in transcript(home):
        if entry["kind"] == "tool_result":
            env = entry["data"].get("envelope") or entry["data"]
            out[env.get("tool_name", entry["data"].get("tool_name"))] = env
    return out


def test_a_turn_binds_a_repository_edits_and_runs_there(holon_env, tmp_path):
    home = init_agent("a")
    repo = make_repo(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("REPO-RULES: run the tests\n")
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+edited by the agent\n"
    model = write_script(
        tmp_path / "s1.jsonl",
        [
            call("UseWorkspace", 1, path=str(repo)),
            call("ApplyPatch", 2, patch=patch),
            call("ExecCommand", 3, cmd="pwd", login=False),
            {"text": "done"},
        ],
    )
    # the operator lets the agent bind it (UseWorkspace never widens the agent's own sandbox)
    run("sandbox", "set", "a", "workspace-write", "--writable-root", str(repo))
    proc = run("prompt", "a", "work in the repo", "--model", model)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "a.txt").read_text() == "edited by the agent\n"
    stdout = json.dumps(transcript(home))
    assert f"{repo.resolve()}\\n" in stdout  # pwd printed the repository
    doc = json.loads(run("debug", "prompt", "a", "--json", "--model", model).stdout)
    assert doc["workspace_anchor"] == doc["execution_root"] == str(repo.resolve())
    sources = {s["kind"]: s["path"] for s in doc["instruction_sources"]}
    assert sources["workspace"] == str(repo.resolve() / "AGENTS.md")
    texts = [b["text"] for b in doc["request"]["system_blocks"]]
    assert any("REPO-RULES" in t for t in texts)
    (repo / "AGENTS.md").unlink()
    (repo / "CLAUDE.md").write_text("CLAUDE-RULES\n")
    doc = json.loads(run("debug", "prompt", "a", "--json", "--model", model).stdout)
    assert {s["kind"]: s["path"] for s in doc["instruction_sources"]}["workspace"].endswith(
        "CLAUDE.md"
    )
    assert any("CLAUDE-RULES" in b["text"] for b in doc["request"]["system_blocks"])

    # isolated: a worktree on its own branch; guidance still from the anchor
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-edited by the agent\n+isolated edit\n"
    git(repo, "commit", "-q", "-am", "agent edit")
    model = write_script(
        tmp_path / "s2.jsonl",
        [
            call("UseWorkspace", 1, path=str(repo), mode="isolated", isolation_label="exp"),
            call("ApplyPatch", 2, patch=patch),
            {"text": "done"},
        ],
    )
    assert run("prompt", "a", "try it isolated", "--model", model).returncode == 0
    bound = json.loads(run("workspace", "list", "a", "--json").stdout)["active"]
    tree = Path(bound["execution_root"])
    assert bound["mode"] == "isolated" and tree != repo.resolve()
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "holon/a/exp"
    assert (tree / "a.txt").read_text() == "isolated edit\n"
    assert (repo / "a.txt").read_text() == "edited by the agent\n"  # main checkout unchanged
    doc = json.loads(run("debug", "prompt", "a", "--json", "--model", model).stdout)
    assert doc["workspace_anchor"] == str(repo.resolve()) and doc["execution_root"] == str(tree)
    assert any("CLAUDE-RULES" in b["text"] for b in doc["request"]["system_blocks"])

    # back home, detach: the dirty worktree is kept and said so
    assert run("workspace", "use", "a", "--id", "agent_home").returncode == 0
    out = run("workspace", "detach", "a", bound["workspace_id"]).stdout
    assert "kept worktree" in out and "a.txt" in out and tree.exists()


def test_run_binds_the_workspace_before_the_turn(holon_env, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    model = write_script(
        tmp_path / "s.jsonl", [call("ExecCommand", 1, cmd="pwd", login=False), {"text": "ok"}]
    )
    proc = run("run", "--workspace", str(proj), "--model", model, "--json", "where?")
    assert proc.returncode == 0, proc.stderr
    init_agent("b")
    model = write_script(
        tmp_path / "t.jsonl", [call("ExecCommand", 1, cmd="pwd", login=False), {"text": "ok"}]
    )
    proc = run("run", "--agent", "b", "--workspace", str(proj), "--model", model, "where?")
    assert proc.returncode == 0, proc.stderr
    home = Path(holon_env) / "agents" / "b"
    assert f"{proj.resolve()}\\n" in json.dumps(transcript(home))
    # without --workspace, the binding is kept
    model = write_script(tmp_path / "u.jsonl", [{"text": "still"}])
    assert run("run", "--agent", "b", "--model", model, "again").returncode == 0
    bound = json.loads(run("workspace", "list", "b", "--json").stdout)["active"]
    assert bound["execution_root"] == str(proj.resolve())

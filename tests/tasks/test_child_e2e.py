"""Private child agents through the real CLI: SpawnAgent in a scripted turn, the child run by
`holon tick --all`, its final brief back in the parent as a task_result, TaskStop, TaskInput,
the delegation limits."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import holon, init_agent, write_script

SPAWN = {
    "tool_calls": [
        {"name": "SpawnAgent", "arguments": {"initial_message": "Count the files\nin the root"}}
    ]
}


def records(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def dot(home: Path) -> Path:
    return home / ".holon"


def registry() -> dict:
    """registry.json with every home path absolute (a path inside HOLON_HOME is stored relative)."""
    base = os.environ["HOLON_HOME"]
    data = json.loads((Path(base) / "registry.json").read_text())
    for part in ("agents", "archived"):
        data[part] = {k: os.path.join(base, v) for k, v in data.get(part, {}).items()}
    return data


def task_records(home: Path) -> list[dict]:
    tasks = dot(home) / "tasks"
    out = []
    for d in sorted(tasks.iterdir()) if tasks.is_dir() else []:
        if (d / "task.json").is_file():
            out.append(json.loads((d / "task.json").read_text()))
    return out


def spawn_child(tmp_path: Path, *after: dict) -> tuple[Path, Path, dict]:
    """Parent `p` spawns a private child in a scripted turn; returns (parent, child, record)."""
    parent = init_agent("p")
    model = write_script(tmp_path / "parent.jsonl", [SPAWN, {"text": "spawned"}, *after])
    holon("model", "set", "p", model)
    holon("prompt", "p", "delegate the count")
    (record,) = task_records(parent)
    return parent, Path(record["child_home"]), record


def give_model(child_id: str, tmp_path: Path, *rounds: dict) -> None:
    holon("model", "set", child_id, write_script(tmp_path / f"{child_id}.jsonl", list(rounds)))


def test_child_runs_under_tick_all_and_its_brief_returns_to_the_parent(tmp_path):
    parent, child, rec = spawn_child(tmp_path, {"text": "the child reported back"})
    child_id = rec["child_agent_id"]
    assert child == dot(parent) / "children" / child_id and child_id.startswith("p.c-")
    assert rec["status"] == "running" and rec["phase"] == "running"
    assert rec["label"] == "Count the files" and rec["workspace_mode"] == "inherit"
    ident = json.loads((dot(child) / "agent.json").read_text())
    assert {k: ident[k] for k in ("kind", "visibility", "ownership", "profile_preset")} == {
        "kind": "child",
        "visibility": "private",
        "ownership": "parent_supervised",
        "profile_preset": "private_child",
    }
    assert ident["lineage_parent_agent_id"] == "p"
    assert registry()["agents"][child_id] == str(child)
    # the parent's turn ended normally: a child runs in the background
    state = json.loads((dot(parent) / "state.json").read_text())
    assert state["closure"]["outcome"] == "completed" and state["active_task_ids"] == [rec["id"]]
    (first,) = records(dot(child) / "ledger" / "messages.jsonl")
    assert first["kind"] == "internal_followup" and first["task_id"] == rec["id"]
    assert first["origin"] == {"kind": "system", "subsystem": "delegation"}
    assert first["trust"] == "trusted_system" and first["authority_class"] == "runtime_instruction"
    assert first["body"]["text"] == "Count the files\nin the root"

    give_model(child_id, tmp_path, {"text": "there are 3 files"})
    holon("tick", "--all")
    holon("tick", "--all")
    (done,) = task_records(parent)
    assert done["status"] == "completed" and done["output_summary"] == "there are 3 files"
    assert done["child_supervision"]["turns"] == 1
    results = [m for m in records(dot(parent) / "ledger" / "messages.jsonl") if m["task_id"]]
    assert len(results) == 1 and results[0]["kind"] == "task_result"
    assert results[0]["body"]["value"]["final_brief"] == "there are 3 files"
    briefs = records(dot(parent) / "ledger" / "briefs.jsonl")
    assert briefs[-1]["text"] == "the child reported back"
    # archived: stopped, marked, out of the live registry, ledgers kept
    assert child_id not in registry()["agents"] and registry()["archived"][child_id] == str(child)
    assert json.loads((dot(child) / "agent.json").read_text())["archived_at"]
    assert json.loads((dot(child) / "state.json").read_text())["status"] == "stopped"
    assert records(dot(child) / "ledger" / "briefs.jsonl")[-1]["text"] == "there are 3 files"
    out = holon("tick", "--all").stdout
    assert child_id not in out
    listed = holon("task", "list", "p").stdout
    assert "completed" in listed and "child agent: Count the files" in listed


def test_task_tools_on_a_child(tmp_path):
    parent, child, rec = spawn_child(tmp_path)
    task_id = rec["id"]
    status = json.loads(holon("task", "status", "p", task_id, "--json").stdout)
    sup = status["child_supervision"]
    assert sup["child_agent_id"] == rec["child_agent_id"] and sup["supervision_task_id"] == task_id
    assert sup["status"] == "running" and sup["pending_messages"] == 1
    assert sup["workspace"] == {
        "workspace_id": "parent_home",
        "execution_root": str(parent),
        "worktree": None,
    }
    out = holon(
        "tool",
        "call",
        "p",
        "TaskInput",
        "--input",
        json.dumps({"task_id": task_id, "input": "also"}),
    )
    receipt = json.loads(out.stdout)["result"]
    assert receipt["accepted_input"] is True and receipt["input_target"] == "child_followup"
    assert len(records(dot(child) / "ledger" / "messages.jsonl")) == 2
    output = json.loads(holon("task", "output", "p", task_id, "--json").stdout)
    assert output["retrieval_status"] == "not_ready"
    assert output["task"]["child_supervision"]["pending_messages"] == 2
    stopped = json.loads(holon("task", "stop", "p", task_id, "--json").stdout)
    assert stopped["task"]["status"] == "cancelled"
    (done,) = task_records(parent)
    assert done["status"] == "cancelled" and done["result_message_id"]
    assert done["failure_artifact"]["kind"] == "task_cancelled"
    assert json.loads((dot(child) / "state.json").read_text())["status"] == "stopped"
    assert rec["child_agent_id"] in registry()["archived"]
    again = json.loads(holon("task", "stop", "p", task_id, "--json").stdout)
    assert again["stop_requested"] is False  # already cancelled: nothing twice
    results = [m for m in records(dot(parent) / "ledger" / "messages.jsonl") if m["task_id"]]
    assert len(results) == 1


def tool(agent: str, name: str, args: dict) -> dict:
    proc = holon("tool", "call", agent, name, "--input", json.dumps(args), check=False)
    return json.loads(proc.stdout) if proc.stdout.strip() else {"stderr": proc.stderr}


def test_limits_refuse_with_clear_kinds(tmp_path, monkeypatch):
    init_agent("p")
    monkeypatch.setenv("HOLON_DELEGATION_MAX_LIVE_CHILDREN", "1")
    monkeypatch.setenv("HOLON_DELEGATION_MAX_DEPTH", "1")
    worktree = tool("p", "SpawnAgent", {"initial_message": "x", "workspace_mode": "worktree"})
    assert worktree["error"]["kind"] == "workspace_not_git"  # the agent home is no repository
    first = tool("p", "SpawnAgent", {"initial_message": "one"})
    assert first["status"] == "success", first
    second = tool("p", "SpawnAgent", {"initial_message": "two"})
    assert second["error"]["kind"] == "too_many_children"
    child = first["result"]["child_agent_id"]
    deeper = tool(child, "SpawnAgent", {"initial_message": "grandchild"})
    assert deeper["error"]["kind"] == "delegation_depth_exceeded"
    retired = tool("p", "SpawnAgent", {"initial_message": "x", "summary": "no such field"})
    assert retired["error"]["kind"] == "invalid_tool_input"


def test_parent_status_shows_its_live_children(tmp_path):
    spawn_child(tmp_path)
    status = json.loads(holon("status", "p", "--json").stdout)
    (child,) = status["active_children"]
    assert child["status"] == "running" and child["child_agent_id"].startswith("p.c-")


def test_child_tokens_count_against_the_parent_budget(tmp_path):
    parent, child, rec = spawn_child(tmp_path)
    holon("model", "budget", "p", "--daily-tokens", "50")
    give_model(
        rec["child_agent_id"],
        tmp_path,
        {
            "tool_calls": [{"name": "AgentGet", "arguments": {}}],
            "usage": {"input_tokens": 60, "output_tokens": 1},
        },
        {"text": "never reached"},
    )
    holon("tick", "--all", check=False)
    (done,) = task_records(parent)
    assert done["status"] == "failed", done
    assert "which created this agent, is spent" in done["output_summary"]


def git(cwd: Path, *args: str) -> str:
    import subprocess

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_worktree_child_edits_and_commits_while_the_parent_checkout_stays(tmp_path, monkeypatch):
    parent = init_agent("p")
    git(parent, "init", "-q", "-b", "main")
    git(parent, "add", "-A")
    git(parent, "commit", "-q", "-m", "start")
    for key, value in (("NAME", "t"), ("EMAIL", "t@example.invalid")):
        monkeypatch.setenv(f"GIT_AUTHOR_{key}", value)
        monkeypatch.setenv(f"GIT_COMMITTER_{key}", value)
    args = {"initial_message": "add a file", "workspace_mode": "worktree"}
    out = json.loads(holon("tool", "call", "p", "SpawnAgent", "--input", json.dumps(args)).stdout)[
        "result"
    ]
    tree = out["child_supervision"]["workspace"]["worktree"]
    assert tree["branch"] == f"holon/{out['child_agent_id']}/task" and tree["changed_files"] == []
    patch = "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+from the child\n"
    commit = "git add added.txt && git commit -q -m 'child work'"
    give_model(
        out["child_agent_id"],
        tmp_path,
        {"tool_calls": [{"name": "ApplyPatch", "arguments": {"patch": patch}}]},
        {"tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": commit, "login": False}}]},
        {"text": "committed added.txt"},
    )
    holon("model", "set", "p", write_script(tmp_path / "p2.jsonl", [{"text": "ok"}]))
    holon("tick", "--all")
    (rec,) = task_records(parent)
    assert rec["status"] == "completed", rec
    assert rec["output_summary"] == "committed added.txt"
    assert not (parent / "added.txt").exists()  # the parent's checkout is unchanged
    assert "added.txt" not in git(parent, "status", "--porcelain")
    assert git(parent, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    shown = git(parent, "show", f"{tree['branch']}:added.txt")
    assert shown == "from the child\n"
    cleanup = rec["worktree"]["cleanup"]
    assert cleanup["removed"] is True and cleanup["retained_reason"] == "branch_retained"
    assert not Path(tree["path"]).parent.exists()  # $HOLON_HOME/worktrees/<child>/ went too


def test_one_tick_all_until_idle_runs_a_whole_delegation_round_trip(tmp_path):
    """`holon tick --all --until-idle` keeps passing until no agent has runnable work: the
    parent's spawn, the child created in that pass, the task_result it wakes the parent with."""
    parent = init_agent("p")
    model = write_script(tmp_path / "parent.jsonl", [SPAWN, {"text": "spawned"}])
    holon("prompt", "p", "delegate the count", "--no-wait", "--model", model)
    # the child, and the parent's task_result turn, run the runtime default (each its own cursor)
    child_model = write_script(tmp_path / "child.jsonl", [{"text": "there are 3 files"}])
    os.environ["HOLON_MODEL"] = child_model
    try:
        holon("tick", "--all", "--until-idle")
    finally:
        del os.environ["HOLON_MODEL"]
    (done,) = task_records(parent)
    assert done["status"] == "completed" and done["output_summary"] == "there are 3 files"
    (result,) = [m for m in records(dot(parent) / "ledger" / "messages.jsonl") if m["task_id"]]
    assert result["kind"] == "task_result"
    briefs = records(dot(parent) / "ledger" / "briefs.jsonl")
    assert [b["text"] for b in briefs] == ["spawned", "there are 3 files"]
    assert briefs[-1]["related_message_id"] == result["id"]  # the parent consumed it
    for home in (parent, Path(done["child_home"])):
        queue = dot(home) / "queue"
        assert not [p for d in ("new", "cur") for p in (queue / d).glob("*")], home

"""`holon run` and the background command tasks its turn starts, through the real entry point:
it waits for them and runs their results, keeps the temporary agent while one still runs
(--no-wait-for-tasks, Ctrl-C), and a run without tasks is unchanged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import holon_cmd, run, subprocess_env, wait_for

from holon.home.layout import Home
from holon.procs import supervises
from holon.tasks import store
from holon.tasks.command import spawn


def exec_round(cmd: str, text: str = "starting") -> dict:
    """A scripted round whose ExecCommand outlives its yield and becomes a task."""
    args = {"cmd": cmd, "yield_time_ms": 50, "login": False}
    return {"text": text, "tool_calls": [{"name": "ExecCommand", "arguments": args}]}


@pytest.fixture
def runs(tmp_path: Path):
    """The dir `holon run` makes its agent in ($HOLON_HOME/run); afterwards, every task process a
    test left behind is stopped."""
    base = Path(os.environ["HOLON_HOME"]) / "run"
    base.mkdir(parents=True, exist_ok=True)
    yield base
    for path in tmp_path.glob("**/.holon/tasks/*/task.json"):
        record = json.loads(path.read_text())
        if record.get("status") not in store.TERMINAL:
            spawn.kill_group(int(record.get("pid") or 0), grace=0.5)
        if supervises(record.get("supervisor_pid"), record["id"]):
            os.kill(record["supervisor_pid"], signal.SIGTERM)


def holon_run(runs: Path, *args: str) -> subprocess.CompletedProcess:
    return run("run", "go", *args, env=subprocess_env(TMPDIR=str(runs)), timeout=30)


def queued_kinds(root: str) -> list[str]:
    return [m["kind"] for m in Home(root).queue.peek_all()]


def test_run_waits_for_the_task_and_runs_its_result(script, runs):
    model = script(exec_round("sleep 1; echo done"), {"text": "started"}, {"text": "all done"})
    r = holon_run(runs, "--model", model, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (task,) = doc["tasks"]
    assert (task["status"], task["exit_status"]) == ("completed", 0)
    assert (doc["status"], doc["final_text"], doc["exit_code"]) == ("completed", "all done", 0)
    assert "home" not in doc and "notice" not in doc
    assert os.listdir(runs) == []  # removed, once nothing ran under it


def test_a_follow_up_that_starts_a_task_is_waited_for_too(script, runs):
    model = script(
        exec_round("sleep 0.5; echo one"),
        {"text": "started one"},
        exec_round("sleep 0.5; echo two", "one is done"),
        {"text": "started two"},
        {"text": "both are done"},
    )
    r = holon_run(runs, "--model", model)
    assert (r.returncode, r.stdout) == (0, "both are done\n"), r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and all(line.endswith(": completed (exit 0)") for line in lines)
    assert os.listdir(runs) == []


def test_a_result_run_within_the_prompts_own_tick_gives_the_final_text(script, runs):
    """The task ends while the turn still runs a foreground command, so the tick that settles the
    prompt also runs the task's result: its text is still the one printed."""
    first = exec_round("sleep 0.2; echo quick")
    foreground = {"cmd": "sleep 0.8", "yield_time_ms": 5000, "login": False}
    first["tool_calls"].append({"name": "ExecCommand", "arguments": foreground})
    model = script(first, {"text": "started"}, {"text": "the result ran"})
    r = holon_run(runs, "--model", model, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [t["status"] for t in doc["tasks"]] == ["completed"]
    assert doc["final_text"] == "the result ran"
    assert os.listdir(runs) == []


def test_no_wait_for_tasks_keeps_the_home_while_the_task_runs(script, runs):
    model = script(exec_round("sleep 1; echo done"), {"text": "started"}, {"text": "all done"})
    r = holon_run(runs, "--model", model, "--json", "--no-wait-for-tasks")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (task,) = doc["tasks"]
    assert (task["status"], task["exit_status"], doc["final_text"]) == ("running", None, "started")
    root = doc["home"]
    assert Path(root).parent.parent == runs and Home(root).exists()
    assert f"`holon tick {root} --until-idle`" in doc["notice"]
    wait_for(lambda: "task_result" in queued_kinds(root), timeout=10)
    (record,) = store.all_records(Home(root))
    assert (record["status"], record["exit_status"]) == ("completed", 0)
    r = run("tick", root, "--until-idle", "--json")  # the command the notice gives
    assert r.returncode == 0, r.stderr
    (report,) = json.loads(r.stdout)["agents"]
    assert [t["final_text"] for t in report["turns"]] == ["all done"]


def test_no_wait_for_tasks_with_a_named_agent_only_reports_the_task(agent, script, runs):
    model = script(exec_round("sleep 1; echo done"), {"text": "started"}, {"text": "all done"})
    r = holon_run(runs, "--agent", "a", "--model", model, "--no-wait-for-tasks")
    assert (r.returncode, r.stdout) == (0, "started\n"), r.stderr
    task_line, notice = r.stderr.splitlines()
    assert task_line.startswith("task task_") and task_line.endswith(": running")
    assert notice.startswith("holon: task task_") and "`holon tick a`" in notice
    assert agent.exists() and os.listdir(runs) == []
    wait_for(lambda: "task_result" in queued_kinds(str(agent.root)), timeout=10)


def test_ctrl_c_while_waiting_keeps_the_home_under_the_running_task(script, runs, tmp_path):
    gate = tmp_path / "gate"  # the task runs until the test opens it: no race with its end
    cmd = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo done"
    model = script(exec_round(cmd), {"text": "started"}, {"text": "all done"})
    proc = subprocess.Popen(
        [*holon_cmd(), "run", "go", "--model", model],
        env=subprocess_env(TMPDIR=str(runs)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        root = wait_for(lambda: _settled_prompt(runs), timeout=10)
        proc.send_signal(signal.SIGINT)  # settling or waiting: either way the task still runs
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130 and out == ""
    (record,) = store.all_records(Home(root))
    assert record["status"] == "running"  # it did not wait the task out
    assert f"note: kept the temporary agent at {root}: task {record['id']} is still" in err
    assert Home(root).exists()
    gate.touch()
    wait_for(lambda: "task_result" in queued_kinds(root), timeout=10)  # delivered, not lost


def _settled_prompt(runs: Path) -> str | None:
    """The temporary agent's home once its prompt turn has settled (its brief is written)."""
    for briefs in runs.glob("holon-run-*/agent/.holon/ledger/briefs.jsonl"):
        if "started" in briefs.read_text():
            return str(briefs.parents[2])
    return None


def test_a_run_without_tasks_is_unchanged(script, runs):
    r = holon_run(runs, "--model", script({"text": "one shot"}), "--json")
    assert (r.returncode, r.stderr) == (0, "")
    doc = json.loads(r.stdout)
    assert doc["final_text"] == "one shot" and doc["exit_code"] == 0
    assert not {"tasks", "home", "notice"} & set(doc)
    assert os.listdir(runs) == []
    r = holon_run(runs, "--model", script({"text": "plain"}, name="p.jsonl"), "--no-wait-for-tasks")
    assert (r.returncode, r.stdout, r.stderr) == (0, "plain\n", "")
    assert os.listdir(runs) == []


def test_ctrl_c_on_prompt_during_a_command_leaves_no_command_without_a_record(
    script, holon_env, tmp_path
):
    """Ctrl-C while `holon prompt` runs a foreground command: the command is stopped (it had no
    task record), or, if it was promoted, its task is recorded and finishes."""
    assert run("init", "--agent-id", "a").returncode == 0
    started, effect = tmp_path / "started", tmp_path / "effect"
    cmd = f"touch {started}; sleep 3; touch {effect}"
    args = {"cmd": cmd, "yield_time_ms": 20000, "login": False}
    model = script({"tool_calls": [{"name": "ExecCommand", "arguments": args}]}, {"text": "ok"})
    proc = subprocess.Popen(
        [*holon_cmd(), "prompt", "a", "--model", model, "go"],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(started.exists, timeout=15)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130 and "Traceback" not in err, err
    home = Home(holon_env / "agents" / "a")
    records = store.all_records(home)
    if not records:
        wait_for(lambda: not _processes_naming(started), timeout=15)  # nothing can touch it now
        assert not effect.exists()  # stopped with the interrupted turn, not left running
    else:
        wait_for(lambda: store.all_records(home)[0]["status"] in store.TERMINAL, timeout=10)


def _processes_naming(path: Path) -> list[int]:
    """The pids of live processes whose command line mentions `path`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(path).encode() in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids

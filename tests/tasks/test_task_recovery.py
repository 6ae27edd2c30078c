"""Recovery at tick start: a task whose supervisor died cannot be recovered; it is `failed`
(failure kind supervisor_lost) and rejoins the queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from helpers import wait_for

from holon.agent.handle import Agent
from holon.procs import alive, group_members
from holon.store import jsonl
from holon.tasks import recovery, store
from holon.tasks.command import command


def promote(home, cmd, yield_ms=100):
    spec = command.CommandSpec(cmd, home.root, "/bin/sh", False, False, False, yield_ms, home.root)
    out = command.run(Agent(home), spec)
    assert isinstance(out, command.Promoted), out
    return out.task["id"], out.task["pid"]


def kill_supervisor(home, task_id):
    sup = store.read_marker(home, task_id)
    assert alive(sup)
    os.kill(sup, signal.SIGKILL)
    wait_for(lambda: not alive(sup), timeout=5)
    return sup


def task_results(home, task_id):
    return [
        m
        for m in jsonl.read(home.messages)
        if m["kind"] == "task_result" and m["task_id"] == task_id
    ]


def events(home, kind):
    return [e for e in jsonl.read(home.events) if e["kind"] == kind]


def test_running_command_with_dead_supervisor_is_stopped_and_failed(agent):
    tid, pgid = promote(agent, "sleep 30 & sleep 30")
    sup = kill_supervisor(agent, tid)
    assert len(group_members(pgid)) >= 2 and store.load(agent, tid)["status"] == "running"
    assert agent.scratch_dir(tid).is_dir()
    assert recovery.recover_tasks(Agent(agent)) == [tid]
    rec = store.load(agent, tid)
    assert rec["status"] == "failed" and rec["exit_status"] is None
    assert group_members(pgid) == []
    assert not agent.scratch_dir(tid).exists()
    failure = json.loads(Path(rec["failure_artifact"]["metadata"]["detail_path"]).read_text())
    assert rec["failure_artifact"]["kind"] == "supervisor_lost"
    assert failure == {
        **failure,
        "kind": "supervisor_lost",
        "task_id": tid,
        "supervisor_pid": sup,
        "command_pid": pgid,
        "command_was_running": True,
        "command_stop": "terminated",
        "exit_status": None,
    }
    [msg] = task_results(agent, tid)
    assert rec["result_message_id"] == msg["id"]
    assert msg["body"]["value"]["status"] == "failed"
    assert store.active_ids(agent) == []
    [ev] = events(agent, "task_recovered")
    assert ev["data"] == {"task_id": tid, "status": "failed", "command_was_running": True}
    # a second recovery finds nothing and admits nothing
    assert recovery.recover_tasks(Agent(agent)) == []
    assert len(task_results(agent, tid)) == 1


def test_command_that_ended_after_its_supervisor_keeps_its_exit_status(agent):
    tid, pgid = promote(agent, "sleep 0.4; exit 4")
    kill_supervisor(agent, tid)
    wait_for(lambda: store.read_exit_status(agent, tid) is not None, timeout=5)
    assert (agent.scratch_dir(tid) / "exit_status").read_text() == "4\n"
    assert not (agent.task_dir(tid) / "exit_status").exists()
    assert recovery.recover_tasks(Agent(agent)) == [tid]
    rec = store.load(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("failed", 4)
    assert not agent.scratch_dir(tid).exists()  # removed with the terminal record
    failure = json.loads(Path(rec["failure_artifact"]["metadata"]["detail_path"]).read_text())
    assert failure["command_was_running"] is False and failure["command_stop"] == "not_running"
    assert len(task_results(agent, tid)) == 1


def test_older_task_with_its_exit_file_in_the_task_dir(agent):
    """A task started before scratch directories existed: its wrapper wrote the exit file into
    the task dir, and recovery still finds its exit status there."""
    synthetic(agent, "task_old", marker="0\n")
    (agent.task_dir("task_old") / "exit_status").write_text("5\n")
    assert recovery.recover_tasks(Agent(agent)) == ["task_old"]
    rec = store.load(agent, "task_old")
    assert (rec["status"], rec["exit_status"]) == ("failed", 5)
    failure = json.loads(Path(rec["failure_artifact"]["metadata"]["detail_path"]).read_text())
    assert failure["exit_status"] == 5 and failure["command_was_running"] is False
    [msg] = task_results(agent, "task_old")
    assert msg["body"]["value"]["exit_status"] == 5


def synthetic(home, task_id, *, status="running", result_message_id=None, marker="0\n"):
    home.task_dir(task_id).mkdir(parents=True)
    rec = store.new_record(
        home.agent_id,
        task_id,
        {"cmd": "x", "cmd_digest": "sha256:x"},
        parent_message_id=None,
        wrapper_pid=0,
    )
    rec.update(
        status=status,
        exit_status=0 if status == "completed" else None,
        result_message_id=result_message_id,
    )
    store.save(home, rec)
    home.tasks_active.mkdir(parents=True, exist_ok=True)
    (home.tasks_active / task_id).write_text(marker)
    return rec


def test_terminal_record_without_task_result_gets_it(agent):
    synthetic(agent, "task_t", status="completed")
    assert recovery.recover_tasks(Agent(agent)) == ["task_t"]
    rec = store.load(agent, "task_t")
    assert rec["status"] == "completed" and rec["failure_artifact"] is None
    [msg] = task_results(agent, "task_t")
    assert rec["result_message_id"] == msg["id"] and msg["body"]["value"]["exit_status"] == 0
    assert events(agent, "task_recovered") == []  # nothing was lost


def test_terminal_record_with_task_result_only_loses_its_marker(agent):
    synthetic(agent, "task_d", status="failed", result_message_id="msg_old")
    assert recovery.recover_tasks(Agent(agent)) == ["task_d"]
    assert task_results(agent, "task_d") == [] and store.active_ids(agent) == []
    assert store.load(agent, "task_d")["result_message_id"] == "msg_old"


def test_marker_without_record_is_cleared(agent):
    agent.tasks_active.mkdir(parents=True, exist_ok=True)
    (agent.tasks_active / "task_ghost").write_text("not-a-pid\n")
    assert recovery.recover_tasks(Agent(agent)) == []
    assert store.active_ids(agent) == []


def test_live_supervisor_is_left_alone(agent):
    # a supervisor is a live process whose command line names its task
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "task_live"])
    try:
        synthetic(agent, "task_live", marker=f"{proc.pid}\n")
        assert recovery.recover_tasks(Agent(agent)) == []
        assert store.active_ids(agent) == ["task_live"]
        assert store.load(agent, "task_live")["status"] == "running"
    finally:
        proc.kill()
        proc.wait()


def test_no_tasks_directory_at_all(tmp_path):
    from holon.home.init import init_home

    home = init_home(str(tmp_path / "bare"), "bare")
    assert recovery.recover_tasks(Agent(home)) == []

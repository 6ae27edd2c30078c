"""holon.tasks.recovery: a pid is a task's supervisor or command only if /proc says so, and a
record left `running` with no marker (a restored commit, a tick that died mid-promotion) is lost,
not running forever."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import wait_for

from holon import procs
from holon.agent.handle import Agent
from holon.procs import alive
from holon.store import jsonl
from holon.store.atomic import write_json
from holon.tasks import recovery, store
from holon.tasks.command import command

OLD = "2020-01-01T00:00:00.000Z"

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


@pytest.fixture
def stranger():
    """A live process that is nobody's task: a pid a stale marker may name after pid reuse."""
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield proc.pid
    proc.kill()
    proc.wait()


def _gone_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def record(home, task_id, *, pid=0, supervisor=None, marker=None, updated_at=OLD, parent=None):
    rec = store.new_record(
        home.agent_id,
        task_id,
        {"cmd": "sleep 30", "cmd_digest": "sha256:x"},
        parent_message_id=parent,
        wrapper_pid=pid,
        supervisor_pid=supervisor,
    )
    rec["updated_at"] = updated_at
    home.task_dir(task_id).mkdir(parents=True, exist_ok=True)
    write_json(home.task_dir(task_id) / "task.json", rec)
    if marker is not None:
        store.set_active(home, task_id, marker)
    return rec


def results(home, task_id):
    return [m for m in jsonl.read(home.messages) if m.get("task_id") == task_id]


def test_a_marker_naming_a_strangers_process_is_no_supervisor(agent, stranger):
    """After a restored commit the marker's pid is alive, but it is not this task's supervisor;
    the record's command pid is the same stranger, who must survive the recovery."""
    record(agent, "task_old", pid=stranger, supervisor=stranger, marker=stranger)
    assert not procs.supervises(stranger, "task_old")
    assert not recovery.command_alive(agent, "task_old", stranger)
    assert recovery.recover_tasks(Agent(agent)) == ["task_old"]
    rec = store.load(agent, "task_old")
    assert rec["status"] == "failed" and store.active_ids(agent) == []
    assert alive(stranger)  # nobody's process was stopped
    [msg] = results(agent, "task_old")
    assert msg["body"]["value"]["status"] == "failed"


def test_a_real_supervisor_and_command_are_recognised(agent):
    spec = command.CommandSpec(
        "sleep 30", agent.root, "/bin/sh", False, False, False, 100, agent.root
    )
    out = command.run(Agent(agent), spec)
    assert isinstance(out, command.Promoted)
    task_id, pgid = out.task["id"], out.task["pid"]
    supervisor = store.read_marker(agent, task_id)
    assert procs.supervises(supervisor, task_id)
    assert not procs.supervises(supervisor, "task_other")
    assert recovery.command_alive(agent, task_id, pgid)
    assert recovery.recover_tasks(Agent(agent)) == []
    assert store.load(agent, task_id)["status"] == "running"


@pytest.mark.parametrize("where", ["scratch", "task"])
def test_a_wrapper_naming_the_exit_file_is_the_command(agent, where):
    """The wrapper shell names its exit file: in the scratch dir, or the task dir of a task started
    before scratch dirs existed. Without HOLON_AGENT_HOME in its environment, that is the proof."""
    directory = agent.scratch_dir("task_w") if where == "scratch" else agent.task_dir("task_w")
    wrapper = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 30; exit 0", str(directory / "exit_status")],
        start_new_session=True,
        env={"PATH": os.environ["PATH"]},
    )
    try:
        assert recovery.command_alive(agent, "task_w", wrapper.pid)
        assert not recovery.command_alive(agent, "task_other", wrapper.pid)
    finally:
        wrapper.kill()
        wrapper.wait()


def test_a_running_record_without_marker_is_lost_once_its_supervisor_is_gone(agent):
    record(agent, "task_orphan", pid=_gone_pid(), supervisor=_gone_pid())
    assert recovery.recover_tasks(Agent(agent)) == ["task_orphan"]
    rec = store.load(agent, "task_orphan")
    assert rec["status"] == "failed" and rec["result_message_id"]
    assert len(results(agent, "task_orphan")) == 1
    assert recovery.recover_tasks(Agent(agent)) == []  # once


def test_a_record_of_a_dead_turn_is_lost_at_once(agent):
    """A turn promotes under the turn lock recovery holds: its unmarked record, however young,
    will never get a supervisor (unless one is starting, below)."""
    record(agent, "task_new", updated_at="2999-01-01T00:00:00.000Z", parent="msg_1")
    assert recovery.recover_tasks(Agent(agent)) == ["task_new"]
    assert store.load(agent, "task_new")["status"] == "failed"


def test_the_marker_of_a_supervisor_still_starting_is_awaited(agent, monkeypatch):
    record(agent, "task_new", updated_at="2999-01-01T00:00:00.000Z", parent="msg_1")
    starter = subprocess.Popen(  # what spawn.launch_supervisor runs, as /proc shows it
        [
            sys.executable,
            "-c",
            "import time; time.sleep(30)",
            "holon.tasks.command.supervisor",
            "h",
            "task_new",
        ]
    )
    try:
        monkeypatch.setattr(recovery, "SUPERVISOR_START_S", 0.5)
        wait_for(lambda: recovery._starter_running("task_new"))  # as /proc shows it, once exec'd
        assert recovery.recover_tasks(Agent(agent)) == []  # left for the supervisor to come
        assert store.load(agent, "task_new")["status"] == "running"
    finally:
        starter.kill()
        starter.wait()
    assert recovery.recover_tasks(Agent(agent)) == ["task_new"]  # the starter died markerless


def test_an_operators_record_without_a_supervisor_yet_may_be_in_promotion(agent):
    record(agent, "task_new", updated_at="2999-01-01T00:00:00.000Z")  # just written
    assert recovery.recover_tasks(Agent(agent)) == []
    assert not agent.tasks_checked.exists()  # it is looked at again next tick
    record(agent, "task_new", updated_at=OLD)  # the promotion never finished
    assert recovery.recover_tasks(Agent(agent)) == ["task_new"]
    assert agent.tasks_checked.exists()


def test_a_lost_marker_of_a_live_supervisor_is_left_to_it(agent):
    spec = command.CommandSpec(
        "sleep 30", agent.root, "/bin/sh", False, False, False, 100, agent.root
    )
    out = command.run(Agent(agent), spec)
    task_id = out.task["id"]
    supervisor = store.read_marker(agent, task_id)
    wait_for(lambda: store.load(agent, task_id).get("supervisor_pid") == supervisor)
    store.clear_active(agent, task_id)
    assert recovery.recover_tasks(Agent(agent)) == []
    assert store.load(agent, task_id)["supervisor_pid"] == supervisor
    assert store.load(agent, task_id)["status"] == "running"


def test_records_are_read_again_only_when_tasks_changed(agent):
    record(agent, "task_done", pid=0)
    rec = store.load(agent, "task_done")
    write_json(agent.task_dir("task_done") / "task.json", {**rec, "status": "completed"})
    assert recovery.recover_tasks(Agent(agent)) == []
    assert agent.tasks_checked.exists()
    # a record changed inside an existing task directory: tasks/ itself did not change
    write_json(agent.task_dir("task_done") / "task.json", {**rec, "updated_at": OLD})
    assert recovery.recover_tasks(Agent(agent)) == []
    record(agent, "task_later", pid=0)  # a new task directory: every record is read
    assert sorted(recovery.recover_tasks(Agent(agent))) == ["task_done", "task_later"]


def test_a_fifo_in_place_of_the_check_mark_does_not_block_recovery(agent):
    record(agent, "task_orphan", pid=_gone_pid(), supervisor=_gone_pid())
    os.mkfifo(agent.tasks_checked)
    assert recovery.recover_tasks(Agent(agent)) == ["task_orphan"]
    assert agent.tasks_checked.is_file()  # replaced by the check it records

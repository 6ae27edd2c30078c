"""command.run: finished within the yield, stopped when promotion is off, or promoted to a task."""

from __future__ import annotations

import os

import pytest
from helpers import wait_for

from holon.procs import alive
from holon.store import jsonl
from holon.tasks import command, spawn, store


def spec(home, cmd, *, yield_ms=5000, tty=False, accepts_input=False, workdir=None):
    return command.CommandSpec(
        cmd, workdir or home.root, "/bin/sh", False, tty, accepts_input, yield_ms
    )


def test_default_shell_is_bash_when_present():
    shell = command.default_shell()
    assert shell in ("/bin/bash", "/bin/sh") and os.access(shell, os.X_OK)
    assert shell == ("/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh")


def test_spec_identity_and_metadata(agent):
    s = spec(agent, "make")
    assert s.digest == store.cmd_digest("make", str(agent.root), "/bin/sh", False, False)
    assert s.metadata() == {
        "cmd": "make",
        "cmd_digest": s.digest,
        "workdir": str(agent.root),
        "shell": "/bin/sh",
        "login": False,
        "tty": False,
        "accepts_input": False,
    }


def test_finished_within_the_yield_touches_no_task_store(agent):
    out = command.run(agent, spec(agent, 'echo "$HOLON_AGENT_ID"; echo e >&2; exit 7'))
    assert isinstance(out, command.Finished)
    assert (out.exit_status, out.signal, out.stdout, out.stderr) == (7, None, "a\n", "e\n")
    assert 0 <= out.duration_ms < 5000
    assert store.all_records(agent) == [] and store.active_ids(agent) == []
    assert not any(p.is_dir() and p.name != "active" for p in agent.tasks.iterdir())


def test_tty_finished_output_is_one_stream(agent):
    out = command.run(agent, spec(agent, "echo a; echo b >&2", tty=True))
    assert out.stderr == "" and out.stdout.replace("\r\n", "\n") == "a\nb\n"


def test_no_promotion_stops_the_command(agent, tmp_path):
    pidfile = tmp_path / "pid"
    out = command.run(
        agent,
        spec(agent, f"echo $$ > {pidfile}; echo partial; sleep 30", yield_ms=200),
        promote=False,
    )
    assert isinstance(out, command.Finished)
    assert out.exit_status is None and out.signal in (9, 15) and out.stdout == "partial\n"
    wait_for(lambda: not alive(int(pidfile.read_text())), timeout=3)
    assert store.all_records(agent) == []


def test_spawn_error_propagates(agent):
    with pytest.raises(spawn.SpawnError):
        command.run(agent, spec(agent, "true", workdir=agent.root / "nope"))
    assert store.all_records(agent) == []


def test_promoted_task_record_then_completion(agent):
    cmd = "echo first; sleep 0.4; echo second"
    out = command.run(agent, spec(agent, cmd, yield_ms=150), parent_message_id="msg_parent")
    assert isinstance(out, command.Promoted)
    task = out.task
    tid = task["id"]
    assert out.initial_output == "first\n" and out.duration_ms >= 150
    assert task["status"] == "running" and task["parent_message_id"] == "msg_parent"
    assert task["command"]["output_path"] == str(agent.task_dir(tid) / "output.log")
    assert task["command"]["terminal_reentry"] is True
    assert task["command"]["cmd_digest"] == spec(agent, cmd).digest
    assert os.getpgid(task["pid"]) == task["pid"]  # the wrapper leads the command's group
    sup = store.read_marker(agent, tid)
    assert sup and sup == task["supervisor_pid"] and alive(sup) and sup != task["pid"]
    assert store.find_running(agent, task["command"]["cmd_digest"])["id"] == tid
    wait_for(lambda: store.load(agent, tid)["result_message_id"], timeout=10)
    rec = store.load(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("completed", 0)
    assert rec["supervisor_pid"] == sup
    assert (agent.task_dir(tid) / "output.log").read_text() == "first\nsecond\n"
    assert (agent.task_dir(tid) / "exit_status").read_text() == "0\n"
    assert store.active_ids(agent) == []
    [msg] = [m for m in jsonl.read(agent.messages) if m["kind"] == "task_result"]
    assert msg["task_id"] == tid and msg["causation_id"] == "msg_parent"
    assert msg["body"]["value"]["output_preview"] == "first\nsecond\n"
    wait_for(lambda: not alive(sup), timeout=5)

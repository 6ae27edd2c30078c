"""The detached supervisor: fd specs, output, stdin and tty forwarding, terminal records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import wait_for

from holon.agent.handle import Agent
from holon.procs import alive
from holon.store import jsonl
from holon.tasks import ops, store
from holon.tasks.command import command, supervisor


def promote(home, cmd, *, tty=False, accepts_input=False, yield_ms=100):
    spec = command.CommandSpec(
        cmd, home.root, "/bin/sh", False, tty, accepts_input, yield_ms, home.root
    )
    out = command.run(Agent(home), spec)
    assert isinstance(out, command.Promoted), out
    return out.task["id"]


def finished(home, task_id, timeout=10.0):
    wait_for(lambda: (store.load(home, task_id) or {}).get("result_message_id"), timeout=timeout)
    return store.load(home, task_id)


def task_results(home, task_id):
    return [
        m
        for m in jsonl.read(home.messages)
        if m["kind"] == "task_result" and m["task_id"] == task_id
    ]


def send_when_ready(home, task_id, text):
    """The supervisor opens stdin.fifo just after command.run returns: retry until it reads."""

    def attempt():
        receipt = ops.send_input(home, task_id, text)
        return receipt if receipt["accepted_input"] else None

    return wait_for(attempt, timeout=5)


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("stdout:5,stderr:6,stdin:7", ({5: "stdout", 6: "stderr"}, 7)),
        ("tty:9,stdin:9", ({9: "tty"}, 9)),
        ("stdout:3,stderr:4", ({3: "stdout", 4: "stderr"}, None)),
        ("", ({}, None)),
        (",stdout:3,", ({3: "stdout"}, None)),
    ],
)
def test_parse_spec(spec, expected):
    assert supervisor.parse_spec(spec) == expected


def test_supervisor_appends_output_and_records_itself(agent):
    tid = promote(agent, "echo one; sleep 0.3; echo two >&2; exit 3")
    sup = store.read_marker(agent, tid)
    assert alive(sup)
    assert agent.scratch_dir(tid).is_dir()  # the wrapper's exit file will land there
    wait_for(lambda: store.load(agent, tid)["supervisor_pid"] == sup, timeout=5)
    rec = finished(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("failed", 3)
    assert rec["failure_artifact"] == {
        "category": "task",
        "summary": "the command exited with status 3",
        "kind": "command_failed",
        "task_id": tid,
        "exit_status": 3,
        "source_chain": ["command_failed"],
        "metadata": {"status": "failed"},
    }
    assert (agent.task_dir(tid) / "output.log").read_text() == "one\ntwo\n"
    # results.finish removes the marker, then the scratch dir, after admitting the task_result
    wait_for(lambda: not agent.scratch_dir(tid).exists(), timeout=5)
    assert not (agent.tasks_active / tid).exists()
    assert not (agent.task_dir(tid) / "exit_status").exists()
    assert len(task_results(agent, tid)) == 1
    wait_for(lambda: not alive(sup), timeout=5)


def test_stdin_forwarding_and_eof(agent):
    tid = promote(agent, "cat; echo cat-ended", accepts_input=True)
    res = send_when_ready(agent, tid, "abc\n")
    assert res["bytes_written"] == 4 and res["input_target"] == "stdin"
    out = agent.task_dir(tid) / "output.log"
    wait_for(lambda: "abc" in out.read_text(), timeout=5)
    ops.send_input(agent, tid, "\x04")  # a lone EOT closes a pipe stdin
    rec = finished(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("completed", 0)
    assert out.read_text() == "abc\ncat-ended\n"


def test_tty_input_is_typed_into_the_terminal(agent):
    tid = promote(agent, "read line; echo got:$line", tty=True, accepts_input=True)
    assert store.load(agent, tid)["command"]["accepts_input"] is True
    res = send_when_ready(agent, tid, "xyz\n")
    assert res["input_target"] == "tty"
    rec = finished(agent, tid)
    assert rec["status"] == "completed"
    assert "got:xyz" in (agent.task_dir(tid) / "output.log").read_text()


def test_no_fifo_without_accepts_input(agent):
    tid = promote(agent, "sleep 0.3")
    rec = finished(agent, tid)
    assert rec["status"] == "completed" and not (agent.task_dir(tid) / "stdin.fifo").exists()


def test_wrapper_killed_without_exit_status_is_a_failure(agent):
    tid = promote(agent, "sleep 0.2; kill -9 $PPID; sleep 0.2; echo orphan-done")
    rec = finished(agent, tid)
    assert rec["status"] == "failed" and rec["exit_status"] is None
    art = rec["failure_artifact"]
    assert art["kind"] == "command_killed"
    detail = json.loads(Path(art["metadata"]["detail_path"]).read_text())
    assert detail["task_id"] == tid and detail["pid"] == rec["pid"]
    assert not (agent.task_dir(tid) / "exit_status").exists()
    wait_for(lambda: not agent.scratch_dir(tid).exists(), timeout=5)  # nothing was written there
    [msg] = task_results(agent, tid)
    assert msg["body"]["value"]["failure_artifact"] == art


def test_background_output_may_linger_briefly(agent):
    tid = promote(agent, "(sleep 0.3; echo late) & echo main; sleep 0.15")
    rec = finished(agent, tid)
    assert rec["status"] == "completed" and rec["exit_status"] == 0
    assert (agent.task_dir(tid) / "output.log").read_text() == "main\nlate\n"

"""`holon task list|status|output|input|stop` against real background tasks (started with the
ExecCommand tool and a short yield); every task is stopped when its test ends."""

from __future__ import annotations

import json
import time

import pytest
from cmd_checks import fails, invoke, ok, ok_json
from helpers import wait_for

from holon.agent.handle import Agent
from holon.cli.task import task_group
from holon.ops import tools
from holon.tasks import ops, store

SNAPSHOT_KEYS = {
    "task_id",
    "kind",
    "status",
    "summary",
    "created_at",
    "updated_at",
    "finished_at",
    "exit_status",
    "parent_message_id",
    "origin",
    "accepts_input",
    "input_target",
    "command",
}


@pytest.fixture
def start(agent):
    started: list[str] = []

    def make(cmd: str, **extra) -> str:
        args = {"cmd": cmd, "login": False, "yield_time_ms": 100, **extra}
        env = tools.call(agent, "ExecCommand", args).envelope
        assert env["result"]["disposition"] == "promoted_to_task", env
        task_id = env["result"]["task_handle"]["task_id"]
        started.append(task_id)
        return task_id

    yield make
    for task_id in started:
        if store.load(agent, task_id)["status"] not in store.TERMINAL:
            ops.stop(Agent(agent), task_id, grace_s=0.5)


def test_list_status_input_output_stop(agent, start):
    task_id = start("cat", accepts_input=True)
    (snap,) = ok_json(task_group, "list", "a", "--json")
    assert set(snap) == SNAPSHOT_KEYS and snap["task_id"] == task_id
    assert snap["status"] == "running" and snap["input_target"] == "stdin"
    assert ok(task_group, "list", "a").stdout == f"{task_id}  running  cat\n"
    status = ok_json(task_group, "status", "a", task_id, "--json")
    assert status["command"]["cmd"] == "cat" and status["exit_status"] is None
    assert ok(task_group, "status", "a", task_id).stdout == f"{task_id}: running\ncommand: cat\n"

    # the supervisor creates stdin.fifo only after the promotion returned (a race, see the report)
    wait_for(lambda: (agent.task_dir(task_id) / "stdin.fifo").exists())
    time.sleep(0.05)
    receipt = ok_json(task_group, "input", "a", task_id, "ping", "--json")
    assert receipt["accepted_input"] is True and receipt["bytes_written"] == 5
    assert receipt["output"] == "ping\n" and receipt["wait_outcome"] == "settled"
    assert snap["origin"] == "operator"  # started through `holon tool call`, not by a turn
    typed = ok(task_group, "input", "a", task_id, "pong", "--no-newline", "--settle", "0.2")
    assert typed.stdout == "pong"  # what the task printed after the input, exactly
    assert typed.stderr.startswith("note: wrote 4 bytes to the stdin of task ")
    wait_for(
        lambda: (
            "pong"
            in ops.output(agent, task_id, block=False, timeout_ms=0, budget_chars=1000)["task"][
                "output_preview"
            ]
        )
    )
    out = ok_json(task_group, "output", "a", task_id, "--json")
    assert out["retrieval_status"] == "not_ready" and out["task"]["status"] == "running"

    stop = ok_json(task_group, "stop", "a", task_id, "--json")
    assert stop["stop_requested"] is True and stop["task"]["status"] == "cancelled"
    assert ok_json(task_group, "list", "a", "--running", "--json") == []
    assert [t["task_id"] for t in ok_json(task_group, "list", "a", "--json")] == [task_id]
    assert ok(task_group, "output", "a", task_id).stdout == "ping\npong"
    again = ok(task_group, "stop", "a", task_id).stdout
    assert again == f"task {task_id} already cancelled\n"


def test_input_that_is_not_accepted_exits_1(agent, start):
    task_id = start("sleep 30")
    result = invoke(task_group, "input", "a", task_id, "hello", "--json")
    assert result.exit_code == 1
    receipt = json.loads(result.stdout)
    assert receipt["accepted_input"] is False and receipt["input_target"] is None
    assert "takes no input" in receipt["summary_text"]


def test_output_waits_for_the_end(agent, start):
    task_id = start("sleep 0.3; echo finished")
    out = ok_json(task_group, "output", "a", task_id, "--wait", "10", "--json")
    assert out["retrieval_status"] == "success" and out["task"]["exit_status"] == 0
    assert out["task"]["output_preview"] == "finished\n"
    assert out["task"]["result_summary"] == "completed with exit status 0"
    assert "(exit 0)" in ok(task_group, "status", "a", task_id).stdout


@pytest.mark.parametrize(
    "sub, extra", [("status", []), ("output", []), ("input", ["x"]), ("stop", [])]
)
def test_unknown_task(agent, sub, extra):
    for task_id in ("task_nope", "../state", ".hidden"):
        _, err = fails("task", sub, "a", task_id, *extra, code=2, kind="unknown_task")
        assert "holon task list" in err
    assert agent.state_json.exists()


def test_unknown_agent_and_empty_list(agent):
    fails("task", "list", "nobody", code=2, kind="unknown_agent")
    fails("task", "status", "nobody", "task_x", code=2, kind="unknown_agent")
    assert ok_json(task_group, "list", "a", "--json") == []
    assert ok(task_group, "list", "a").stdout == ""


@pytest.mark.parametrize("text", ["{not json", "[]", '{"id": "t", "kind": "command"}'])
def test_a_corrupt_task_json_is_reported_and_the_others_still_listed(agent, start, text):
    start("sleep 30")
    (good,) = ok_json(task_group, "list", str(agent.root), "--json")
    bad_dir = agent.task_dir("tsk_corrupt")
    bad_dir.mkdir(parents=True)
    (bad_dir / "task.json").write_text(text)
    listed = ok_json(task_group, "list", str(agent.root), "--json")
    assert listed[0]["task_id"] == good["task_id"]
    assert listed[1]["task_id"] == "tsk_corrupt" and listed[1]["status"] == "corrupt"
    assert listed[1]["error"]["kind"] == "corrupt_state"
    assert str(bad_dir / "task.json") in listed[1]["error"]["message"]
    text_out = ok(task_group, "list", str(agent.root)).stdout
    assert good["task_id"] in text_out and "tsk_corrupt  corrupt  " in text_out
    for sub in ("status", "output"):
        out, err = fails("task", sub, str(agent.root), "tsk_corrupt", code=1, kind="corrupt_state")
        assert str(bad_dir / "task.json") in err


def test_a_corrupt_task_json_never_stops_a_turn(agent, tmp_path):
    from helpers import run, write_script

    agent.task_dir("tsk_corrupt").mkdir(parents=True)
    (agent.task_dir("tsk_corrupt") / "task.json").write_text("{not json")
    model = write_script(tmp_path / "s.jsonl", [{"text": "still working"}])
    proc = run("prompt", "a", "hello", "--model", model)
    assert proc.returncode == 0 and "still working" in proc.stdout, proc.stderr


def test_input_failures_have_a_kind_and_a_hint(agent, start):
    no_input = start("sleep 30")
    result = invoke(task_group, "input", "a", no_input, "hello")
    first, hint = result.stderr.splitlines()
    assert result.exit_code == 1 and first.startswith("holon: input_refused: "), result.stderr
    assert hint == f"hint: `holon task status a {no_input}` shows whether it takes input"
    ops.stop(Agent(agent), no_input, grace_s=0.3)
    result = invoke(task_group, "input", "a", no_input, "hello")
    first, hint = result.stderr.splitlines()
    assert result.exit_code == 1 and first.startswith("holon: task_ended: "), result.stderr
    assert hint.startswith("hint: the task is ") and f"holon task output a {no_input}" in hint


def test_input_whose_expect_times_out_is_an_error_with_a_hint(agent, start):
    task_id = start("cat", accepts_input=True)
    wait_for(lambda: (agent.task_dir(task_id) / "stdin.fifo").exists())
    result = invoke(
        task_group, "input", "a", task_id, "ping", "--expect", "never", "--timeout", "0.5"
    )
    lines = result.stderr.splitlines()
    assert result.exit_code == 1 and lines[0].startswith("holon: expect_timeout: "), result.stderr
    assert lines[1].startswith("hint: raise --timeout")
    ops.stop(Agent(agent), task_id, grace_s=0.3)

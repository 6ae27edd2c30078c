"""Task control over real promoted commands: stop (the whole group), output, input, list."""

from __future__ import annotations

import pytest
from helpers import wait_for

from holon.agent.handle import Agent
from holon.procs import group_members
from holon.store import jsonl
from holon.tasks import ops, store
from holon.tasks.command import command


def promote(home, cmd, *, accepts_input=False, yield_ms=100):
    spec = command.CommandSpec(
        cmd, home.root, "/bin/sh", False, False, accepts_input, yield_ms, home.root
    )
    out = command.run(Agent(home), spec)
    assert isinstance(out, command.Promoted), out
    return out.task["id"], out.task["pid"]


def task_results(home, task_id):
    return [
        m
        for m in jsonl.read(home.messages)
        if m["kind"] == "task_result" and m["task_id"] == task_id
    ]


def test_unknown_task(agent):
    for fn, args in ((ops.status, ()), (ops.send_input, ("x",))):
        with pytest.raises(ops.TaskNotFound):
            fn(agent, "task_nope", *args)
    with pytest.raises(ops.TaskNotFound):
        ops.stop(Agent(agent), "task_nope")
    with pytest.raises(ops.TaskNotFound):
        ops.output(agent, "task_nope", block=False, timeout_ms=0, budget_chars=100)


def test_stop_kills_the_whole_process_group(agent):
    tid, pgid = promote(agent, "sleep 30 & sleep 30 & sleep 30")
    assert len(group_members(pgid)) >= 3
    res = ops.stop(Agent(agent), tid)
    assert res["stop_requested"] is True and res["force_stop_requested"] is False
    assert res["task"]["status"] == "cancelled"
    assert res["summary_text"] == f"task {tid}: process group terminated; status cancelled"
    assert group_members(pgid) == []
    assert (agent.task_dir(tid) / "stop_requested").read_text() == "1\n"
    wait_for(lambda: store.load(agent, tid)["result_message_id"], timeout=5)
    assert [m["body"]["value"]["status"] for m in task_results(agent, tid)] == ["cancelled"]
    again = ops.stop(Agent(agent), tid)
    assert again["stop_requested"] is False and again["summary_text"].endswith("already cancelled")


def test_stop_escalates_to_kill_for_a_term_ignoring_task(agent):
    tid, pgid = promote(agent, "trap '' TERM; sleep 30 & wait", yield_ms=200)
    res = ops.stop(Agent(agent), tid, grace_s=0.3)
    assert res["force_stop_requested"] is True and res["task"]["status"] == "cancelled"
    assert "process group killed" in res["summary_text"]
    wait_for(lambda: group_members(pgid) == [], timeout=2)  # SIGKILL lands asynchronously


def test_output_blocks_until_the_terminal_record(agent):
    tid, _ = promote(agent, "echo start; sleep 0.3; echo fin")
    early = ops.output(agent, tid, block=False, timeout_ms=0, budget_chars=1000)
    assert early["retrieval_status"] == "not_ready" and early["task"]["status"] == "running"
    res = ops.output(agent, tid, block=True, timeout_ms=10000, budget_chars=1000)
    task = res["task"]
    assert res["retrieval_status"] == "success" and task["status"] == "completed"
    assert (
        task["output_preview"] == "start\nfin\n"
        and task["result_summary"] == "completed with exit status 0"
    )
    assert task["artifacts"] == [
        {"path": str(agent.task_dir(tid) / "output.log"), "kind": "task_output", "bytes": 10}
    ]


def test_output_timeout_on_a_running_task(agent):
    tid, _ = promote(agent, "sleep 30")
    try:
        res = ops.output(agent, tid, block=True, timeout_ms=100, budget_chars=1000)
        assert res["retrieval_status"] == "timeout" and res["task"]["exit_status"] is None
    finally:
        ops.stop(Agent(agent), tid)


def accepted(receipt):
    return receipt if receipt["accepted_input"] else None


def test_input_reaches_stdin_and_status_snapshot(agent):
    tid, _ = promote(agent, "cat", accepts_input=True)
    try:
        snap = ops.status(agent, tid)
        assert snap["accepts_input"] is True and snap["input_target"] == "stdin"
        # the supervisor opens stdin.fifo only after command.run returned: retry until it reads
        res = wait_for(lambda: accepted(ops.send_input(agent, tid, "héllo\n")), timeout=5)
        assert res["bytes_written"] == len("héllo\n".encode()) and res["input_target"] == "stdin"
        out = agent.task_dir(tid) / "output.log"
        wait_for(lambda: "héllo" in out.read_text(), timeout=5)
    finally:
        ops.stop(Agent(agent), tid)
    late = ops.send_input(agent, tid, "more\n")
    assert late["accepted_input"] is False and "no longer" in late["summary_text"]


def test_list_tasks(agent):
    done, _ = promote(agent, "sleep 0.2", yield_ms=50)
    wait_for(lambda: store.load(agent, done)["status"] == "completed", timeout=5)
    live, _ = promote(agent, "sleep 30")
    try:
        assert [t["task_id"] for t in ops.list_tasks(agent, include_finished=False)] == [live]
        assert [t["task_id"] for t in ops.list_tasks(agent)] == [done, live]
        assert ops.list_tasks(agent)[0]["command"]["cmd_preview"] == "sleep 0.2"
    finally:
        ops.stop(Agent(agent), live)

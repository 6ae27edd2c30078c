"""Command tasks through the real CLI (subprocesses):
completion, promotion and wake-up, tty input, stop, recovery."""

from __future__ import annotations

import json
import os
import signal
import sys

from helpers import holon, init_agent, transcript, wait_for, write_script

from holon.procs import group_members


def tool_call(agent, name, args, check=True):
    proc = holon("tool", "call", agent, name, "--input", json.dumps(args), check=check)
    return json.loads(proc.stdout)


def record(home, task_id):
    return json.loads((home / ".holon" / "tasks" / task_id / "task.json").read_text())


def tool_results(home):
    return [e for e in transcript(home) if e["kind"] == "tool_result"]


def test_completed_within_yield(tmp_path):
    home = init_agent()
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"name": "ExecCommand", "arguments": {"cmd": "echo hello", "login": False}}
                ]
            },
            {"text": "done"},
        ],
    )
    holon("prompt", "a", "run it", "--model", model)
    text = json.dumps(tool_results(home))
    assert '"disposition": "completed"' in text or '"disposition":"completed"' in text
    assert "hello" in text


def test_promoted_task_wakes_agent_on_later_tick(tmp_path):
    home = init_agent()
    go = home / "go"  # the command runs until the test has seen it outlive its tick
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "name": "ExecCommand",
                        "arguments": {
                            "cmd": f"until [ -e {go} ]; do sleep 0.05; done; echo finished",
                            "login": False,
                            "yield_time_ms": 200,
                        },
                    }
                ]
            },
            {"text": "sleeping until the task ends"},
            {"text": "the task finished"},
        ],
    )
    holon("prompt", "a", "start it", "--model", model)
    env = tool_results(home)[0]["data"]["envelope"]
    task_id = env["result"]["task_handle"]["task_id"]
    assert record(home, task_id)["status"] == "running"  # the tick has exited; the task has not
    go.touch()
    wait_for(lambda: record(home, task_id).get("result_message_id"))
    rec = record(home, task_id)
    assert rec["status"] == "completed" and rec["exit_status"] == 0
    holon("tick", "a", "--model", model)
    entries = transcript(home)
    msgs = [e for e in entries if e["kind"] == "message" and "task_result" in json.dumps(e)]
    assert msgs and "finished" in json.dumps(msgs[-1])
    assert "the task finished" in json.dumps(entries[-5:])
    assert not (home / ".holon" / "tasks" / "active" / task_id).exists()


def test_tty_repl_driven_across_ticks(tmp_path):
    home = init_agent()
    first = write_script(
        tmp_path / "1.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "name": "ExecCommand",
                        "arguments": {
                            "cmd": f"{sys.executable} -i -q",
                            "tty": True,
                            "login": False,
                            "yield_time_ms": 300,
                        },
                    }
                ]
            },
            {"text": "repl started"},
        ],
    )
    holon("prompt", "a", "start a repl", "--model", first)
    task_id = tool_results(home)[0]["data"]["envelope"]["result"]["task_handle"]["task_id"]
    second = write_script(
        tmp_path / "2.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "name": "TaskInput",
                        "arguments": {"task_id": task_id, "input": "print(6*7)\n"},
                    }
                ]
            },
            {"text": "sent"},
        ],
    )
    holon("prompt", "a", "compute", "--model", second)
    res = tool_results(home)[-1]["data"]["envelope"]["result"]
    assert res["accepted_input"] is True and res["input_target"] == "tty"
    out = home / ".holon" / "tasks" / task_id / "output.log"
    wait_for(lambda: b"42" in out.read_bytes())
    third = write_script(
        tmp_path / "3.jsonl",
        [
            {
                "tool_calls": [
                    {"name": "TaskInput", "arguments": {"task_id": task_id, "input": "exit()\n"}}
                ]
            },
            {"text": "bye"},
        ],
    )
    holon("prompt", "a", "quit", "--model", third)
    wait_for(lambda: record(home, task_id)["status"] == "completed")


def test_task_stop_kills_process_tree():
    home = init_agent()
    env = tool_call(
        "a",
        "ExecCommand",
        {"cmd": "sleep 60 & sleep 60 & wait", "login": False, "yield_time_ms": 200},
    )
    task_id = env["result"]["task_handle"]["task_id"]
    pgid = record(home, task_id)["pid"]
    assert len(group_members(pgid)) >= 3
    stop = tool_call("a", "TaskStop", {"task_id": task_id})
    assert stop["result"]["stop_requested"] and stop["result"]["task"]["status"] == "cancelled"
    assert group_members(pgid) == []
    wait_for(lambda: record(home, task_id).get("result_message_id"))


def test_supervisor_killed_is_recovered_by_next_tick(tmp_path):
    home = init_agent()
    env = tool_call("a", "ExecCommand", {"cmd": "sleep 30", "login": False, "yield_time_ms": 100})
    task_id = env["result"]["task_handle"]["task_id"]
    sup = int((home / ".holon" / "tasks" / "active" / task_id).read_text())
    pgid = record(home, task_id)["pid"]
    os.kill(sup, signal.SIGKILL)
    from holon.procs import alive

    wait_for(lambda: not alive(sup))
    model = write_script(tmp_path / "s.jsonl", [{"text": "noted the interrupted task"}])
    holon("tick", "a", "--model", model)
    rec = record(home, task_id)
    assert rec["status"] == "failed" and rec["failure_artifact"]["kind"] == "supervisor_lost"
    assert (
        os.path.exists(rec["failure_artifact"]["metadata"]["detail_path"])
        and rec["result_message_id"]
    )
    assert group_members(pgid) == []
    assert "task_result" in json.dumps(transcript(home))


def test_operator_task_commands():
    home = init_agent()
    env = tool_call(
        "a",
        "ExecCommand",
        {"cmd": "cat", "login": False, "accepts_input": True, "yield_time_ms": 100},
    )
    task_id = env["result"]["task_handle"]["task_id"]
    assert task_id in holon("task", "list", "a").stdout
    assert holon("task", "input", "a", task_id, "ping").returncode == 0
    wait_for(lambda: b"ping" in (home / ".holon" / "tasks" / task_id / "output.log").read_bytes())
    status = json.loads(holon("task", "status", "a", task_id, "--json").stdout)
    assert status["status"] == "running" and status["input_target"] == "stdin"
    holon("task", "stop", "a", task_id)
    out = json.loads(holon("task", "output", "a", task_id, "--json").stdout)
    assert out["retrieval_status"] == "success" and "ping" in out["task"]["output_preview"]
    assert holon("task", "input", "a", task_id, "late", check=False).returncode == 1
    assert holon("tool", "call", "a", "NoSuchTool", check=False).returncode == 2
    assert holon("tool", "call", "a", "ExecCommand", "--input", "[1]", check=False).returncode == 2
    assert holon("tool", "call", "nobody", "ExecCommand", check=False).returncode == 2
    assert (
        holon(
            "tool", "call", "a", "TaskStatus", "--input", '{"task_id":"nope"}', check=False
        ).returncode
        == 1
    )


def test_a_turn_that_sleeps_on_its_task_waits_for_the_result_across_a_crash(tmp_path):
    """active_task_ids end to end: the closure, the committed blocker and the work-queue
    projection see the promoted task; a lost state write is repaired by the next busy tick; the
    task's result clears it."""
    from holon.agent.handle import Agent
    from holon.home.layout import Home
    from holon.prompt.workqueue import projection

    home = init_agent()
    item = json.loads(holon("work", "create", "a", "build the thing", "--json").stdout)
    item_id = item.get("id") or item["work_item"]["id"]
    tool_call("a", "PickWorkItem", {"work_item_id": item_id})
    gate = tmp_path / "gate"
    sleep_round = {"tool_calls": [{"name": "Sleep", "arguments": {"reason": "await the build"}}]}
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "name": "ExecCommand",
                        "arguments": {
                            "cmd": f"while [ ! -e {gate} ]; do sleep 0.05; done; echo built",
                            "login": False,
                            "yield_time_ms": 100,
                        },
                    }
                ]
            },
            sleep_round,
            {"text": "still waiting"},
            sleep_round,
            {"text": "waiting again"},
            {"text": "the build finished"},
        ],
    )
    holon("prompt", "a", "build it", "--model", model)
    task_id = tool_results(home)[0]["data"]["envelope"]["result"]["task_handle"]["task_id"]
    agent = Agent(Home(home, "a"))

    def check_waiting():
        state = agent.state()
        assert state.active_task_ids == [task_id]
        assert state.closure["waiting_reason"] == "awaiting_task_result"
        assert f"active tasks: {task_id}" in projection(agent)

    check_waiting()
    shown = json.loads(holon("work", "show", "a", item_id).stdout)
    item = shown.get("work_item", shown)
    # the item waits on its task (spec: Work-Item scheduling, waiting_task)
    assert item["scheduling_state"] == "waiting_task", shown
    assert task_id in item["wait"]["task_ids"], shown

    # a crash lost the state write that listed the task: the next busy tick puts it back
    state_file = home / ".holon" / "state.json"
    state = json.loads(state_file.read_text())
    state["active_task_ids"] = []
    state_file.write_text(json.dumps(state))
    holon("prompt", "a", "status?", "--model", model)
    check_waiting()

    gate.write_text("go")  # the task ends; its result is admitted and wakes the agent
    wait_for(lambda: record(home, task_id).get("result_message_id"))
    assert Agent(Home(home, "a")).state().active_task_ids == []
    holon("tick", "a", "--model", model)
    state = Agent(Home(home, "a")).state()
    assert state.active_task_ids == []
    assert state.closure.get("waiting_reason") != "awaiting_task_result"
    assert "the build finished" in json.dumps(transcript(home)[-5:])


def test_work_item_waits_on_its_task_and_runs_again_when_the_result_arrives(tmp_path):
    """Spec, Work-Item Persistence Foundation (WorkItemSchedulingState `waiting_task` from an
    active task wait) through real turns: the item's turn rests on a background task, so the
    item is waiting_task (projected as blocked); once the task's result arrives it is runnable
    and the turn that result wakes clears the wait."""
    home = init_agent()
    item = json.loads(holon("work", "create", "a", "build it", "--json").stdout)["id"]
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"name": "PickWorkItem", "arguments": {"work_item_id": item}}]},
            {
                "tool_calls": [
                    {
                        "name": "ExecCommand",
                        "arguments": {"cmd": "sleep 60", "login": False, "yield_time_ms": 200},
                    }
                ]
            },
            {"tool_calls": [{"name": "Sleep", "arguments": {}}]},
            {"text": "waiting for the build"},
            {"text": "the build ended"},
        ],
    )
    holon("prompt", "a", "build it", "--model", model)
    task_id = tool_results(home)[1]["data"]["envelope"]["result"]["task_handle"]["task_id"]
    shown = json.loads(holon("work", "show", "a", item).stdout)
    assert shown["scheduling_state"] == "waiting_task" and shown["readiness"] == "current"
    assert shown["wait"] == {"kind": "task", "task_ids": [task_id]}
    holon("task", "stop", "a", task_id)
    wait_for(lambda: record(home, task_id).get("result_message_id"))
    assert json.loads(holon("work", "show", "a", item).stdout)["scheduling_state"] == "runnable"
    holon("tick", "a", "--model", model)
    shown = json.loads(holon("work", "show", "a", item).stdout)
    assert shown["wait"] is None and shown["scheduling_state"] == "runnable"

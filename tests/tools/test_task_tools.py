"""Task* tools over synthetic task records: receipts, errors, retrieval states and budgets."""

from __future__ import annotations

import json

import pytest

from holon.agent.handle import Agent
from holon.tasks import store
from holon.tools import registry
from holon.tools.base import RenderPolicy, ToolContext
from holon.tools.task_tools import TaskList, TaskOutput


@pytest.fixture
def ctx(agent):
    return ToolContext(agent=Agent(agent), execution_root=agent.root, cwd=agent.root)


def make_task(
    home,
    task_id,
    *,
    status="running",
    output=b"",
    exit_status=None,
    cmd="make all",
    accepts_input=False,
    tty=False,
    failure=None,
):
    tdir = home.task_dir(task_id)
    tdir.mkdir(parents=True)
    (tdir / "output.log").write_bytes(output)
    command = {
        "cmd": cmd,
        "cmd_digest": store.cmd_digest(cmd, str(home.root), "/bin/sh", False, tty),
        "workdir": str(home.root),
        "shell": "/bin/sh",
        "login": False,
        "tty": tty,
        "accepts_input": accepts_input,
        "output_path": str(tdir / "output.log"),
        "terminal_reentry": True,
    }
    rec = store.new_record(
        home.agent_id, task_id, command, parent_message_id="msg_p", wrapper_pid=999_999_999
    )
    rec.update(status=status, exit_status=exit_status, failure_artifact=failure)
    store.save(home, rec)
    return rec


def call(ctx, name, args):
    out = registry.call(ctx, name, args)
    assert json.loads(json.dumps(out.envelope)) == out.envelope
    return out.envelope, out.rendered


@pytest.mark.parametrize("name", ["TaskStatus", "TaskOutput", "TaskInput", "TaskStop"])
def test_unknown_task_is_task_not_found(ctx, name):
    args = {"task_id": "task_missing", **({"input": "x"} if name == "TaskInput" else {})}
    env, rendered = call(ctx, name, args)
    assert env["error"]["kind"] == "task_not_found"
    assert env["error"]["details"] == {"field": "task_id", "task_id": "task_missing"}
    assert "TaskList" in env["error"]["recovery_hint"] and '"field": "task_id"' in rendered


@pytest.mark.parametrize("task_id", ["../x", ".hidden", "active"])
def test_path_like_task_ids_are_not_found(ctx, task_id):
    env, _ = call(ctx, "TaskStatus", {"task_id": task_id})
    assert env["error"]["kind"] == "task_not_found"


def test_status_is_a_snapshot_without_output(ctx):
    make_task(ctx.home, "task_1", output=b"secret output\n")
    env, rendered = call(ctx, "TaskStatus", {"task_id": "task_1"})
    task = env["result"]["task"]
    assert env["summary_text"] == "task task_1 is running"
    assert task["status"] == "running" and task["input_target"] is None
    assert task["command"]["cmd_preview"] == "make all" and task["parent_message_id"] == "msg_p"
    assert "secret output" not in rendered and "output_preview" not in task


def test_output_of_a_finished_task_renders_text_and_artifacts(ctx):
    failure = {
        "category": "task",
        "summary": "the command was killed by signal 9",
        "kind": "command_killed",
        "metadata": {"status": "failed", "detail_path": "/tmp/fail.json"},
    }
    make_task(
        ctx.home,
        "task_2",
        status="failed",
        output=b"line 1\nline 2\n",
        exit_status=2,
        failure=failure,
    )
    env, rendered = call(ctx, "TaskOutput", {"task_id": "task_2"})
    res = env["result"]
    assert res["retrieval_status"] == "success"
    assert res["task"]["result_summary"] == "failed with exit status 2"
    assert res["task"]["output_artifact"] == 0 and res["task"]["artifacts"][0]["bytes"] == 14
    out_path = ctx.home.task_dir("task_2") / "output.log"
    assert rendered == (
        f"task task_2 is failed (retrieval success)\nexit status: 2\n--- output ---\n"
        f"line 1\nline 2\n[artifacts[0]] full output (14 bytes): {out_path}\n"
        "failure (command_killed): the command was killed by signal 9 (details: /tmp/fail.json)"
    )


def test_output_of_a_running_task_is_not_ready_or_times_out(ctx):
    make_task(ctx.home, "task_3")
    env, rendered = call(ctx, "TaskOutput", {"task_id": "task_3", "block": False})
    assert env["result"]["retrieval_status"] == "not_ready"
    assert env["result"]["task"]["result_summary"] is None
    assert "(no output)" in rendered and "exit status" not in rendered
    env, _ = call(ctx, "TaskOutput", {"task_id": "task_3", "timeout_ms": 0})
    assert env["result"]["retrieval_status"] == "timeout"
    env, _ = call(ctx, "TaskOutput", {"task_id": "task_3", "block": False, "timeout_ms": 10})
    assert env["error"]["kind"] == "invalid_tool_input"
    assert env["error"]["details"]["field"] == "timeout_ms"


def test_output_preview_respects_max_output_tokens(ctx):
    text = "".join(f"row {i}\n" for i in range(2000)).encode()
    make_task(ctx.home, "task_4", status="completed", output=text, exit_status=0)
    env, rendered = call(ctx, "TaskOutput", {"task_id": "task_4", "max_output_tokens": 50})
    task = env["result"]["task"]
    assert task["output_truncated"] is True and len(task["output_preview"]) < 400
    assert task["output_preview"].startswith("row 0\n") and "row 1999" in task["output_preview"]
    assert "[output truncated" in rendered


def test_input_rejections_are_receipts_not_errors(ctx):
    make_task(ctx.home, "task_5")
    env, rendered = call(ctx, "TaskInput", {"task_id": "task_5", "input": "y\n"})
    res = env["result"]
    assert env["status"] == "success" and res["accepted_input"] is False
    assert res["bytes_written"] == 0 and "takes no input" in res["summary_text"]
    assert "accepted_input: false" in rendered
    make_task(ctx.home, "task_6", accepts_input=True)  # running, but no supervisor fifo
    env, rendered = call(ctx, "TaskInput", {"task_id": "task_6", "input": "y\n"})
    assert env["result"]["accepted_input"] is False and env["result"]["input_target"] == "stdin"
    assert "no live input channel" in rendered
    make_task(ctx.home, "task_7", status="completed", tty=True, accepts_input=True, exit_status=0)
    env, _ = call(ctx, "TaskInput", {"task_id": "task_7", "input": "y\n"})
    assert env["result"]["input_target"] == "tty"
    assert "can no longer be delivered" in env["result"]["summary_text"]


def test_stop_of_a_finished_task_is_a_no_op(ctx):
    make_task(ctx.home, "task_8", status="completed", exit_status=0)
    env, _ = call(ctx, "TaskStop", {"task_id": "task_8"})
    assert env["summary_text"] == "task task_8 already completed"
    assert env["result"]["stop_requested"] is False and "summary_text" not in env["result"]
    assert not (ctx.home.task_dir("task_8") / "stop_requested").exists()


def test_list_running_and_finished(ctx):
    make_task(ctx.home, "task_a", status="completed", exit_status=0, cmd="echo   a\n  b")
    make_task(ctx.home, "task_b")
    env, rendered = call(ctx, "TaskList", {})
    assert [t["task_id"] for t in env["result"]["tasks"]] == ["task_b"]
    assert rendered == "1 task(s)\ntask_b running: make all"
    env, rendered = call(ctx, "TaskList", {"include_finished": True})
    assert {t["task_id"] for t in env["result"]["tasks"]} == {"task_a", "task_b"}
    assert "task_a completed exit 0: echo a b" in rendered.splitlines()


def test_list_render_is_bounded_by_the_policy():
    tasks = [
        {
            "task_id": f"task_{i}",
            "status": "running",
            "exit_status": None,
            "command": {"cmd_preview": "x" * 60},
        }
        for i in range(200)
    ]
    env = {"summary_text": "200 task(s)", "result": {"tasks": tasks}}
    text = TaskList().render(env, RenderPolicy(default_tokens=100))
    assert len(text) <= 500 and "[output truncated" in text and "task_199" in text


def test_output_render_without_artifacts():
    env = {
        "summary_text": "s",
        "result": {
            "retrieval_status": "success",
            "task": {
                "exit_status": 0,
                "output_preview": "",
                "artifacts": [],
                "failure_artifact": None,
            },
        },
    }
    assert (
        TaskOutput().render(env, RenderPolicy()) == "s\nexit status: 0\n--- output ---\n(no output)"
    )

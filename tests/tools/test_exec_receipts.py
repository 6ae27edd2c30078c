"""ExecCommand in-process: each disposition and error, checked against golden receipts."""

from __future__ import annotations

import json
import os
import time

import pytest
from helpers import check_golden, normalize

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tools import registry
from holon.tools.base import ToolContext


@pytest.fixture
def ctx(tmp_path):
    home = tmp_path / "holon-home" / "agents" / "a"
    home.mkdir(parents=True)
    return ToolContext(agent=Agent(Home(home, "a")), execution_root=home, cwd=home)


def call(ctx, name, args):
    outcome = registry.call(ctx, name, args)
    env, rendered = outcome.envelope, outcome.rendered
    assert json.loads(json.dumps(env)) == env  # the envelope is plain JSON
    return env, normalize(rendered)


def test_completed(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "echo out; echo err >&2; exit 3", "login": False})
    res = env["result"]
    assert res["disposition"] == "completed" and res["exit_status"] == 3
    assert res["stdout_preview"] == "out\n" and res["stderr_preview"] == "err\n"
    assert "task_handle" not in res
    check_golden("receipts/exec_completed.txt", r)


def test_json_output_is_not_double_encoded(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "printf '{\"a\": [1, 2]}'", "login": False})
    assert '\\"' not in r and '"a": [' in r


def test_command_not_found_is_exit_127(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "definitely-not-a-command-xyz", "login": False})
    assert env["status"] == "success" and env["result"]["exit_status"] == 127
    assert "not found" in env["result"]["stderr_preview"]
    check_golden("receipts/exec_not_found.txt", r)


def test_large_output_head_tail_and_artifact(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "seq 1 300000", "login": False})  # ~2 MB
    res = env["result"]
    assert res["truncated"] and res["stdout_artifact"] == 0
    art = res["artifacts"][0]
    assert os.path.getsize(art["path"]) > 1_900_000 and art["path"].startswith(str(ctx.home))
    assert res["stdout_preview"].startswith("1\n2\n") and res["stdout_preview"].endswith("300000\n")
    assert "[output truncated" in res["stdout_preview"] and len(r) < 34000
    from pathlib import Path

    assert Path(art["path"]).read_text().splitlines()[149999] == "150000"


def test_workdir_escape(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "ls", "workdir": "../.."})
    assert env["error"]["kind"] == "execution_root_violation" and env["error"]["recovery_hint"]
    check_golden("receipts/exec_root_violation.txt", r)


def test_spawn_failures(ctx):
    env, r = call(ctx, "ExecCommand", {"cmd": "true", "shell": "/no/such/shell"})
    assert env["error"]["kind"] == "spawn_failed"
    check_golden("receipts/exec_spawn_failed.txt", r)
    (ctx.home.root / "gone").mkdir()
    os.rmdir(ctx.home.root / "gone")
    env, _ = call(ctx, "ExecCommand", {"cmd": "true", "workdir": "gone"})
    assert env["error"]["kind"] == "spawn_failed" and "does not exist" in env["error"]["message"]


def test_invalid_input_and_unknown_tool(ctx):
    _, r = call(ctx, "ExecCommand", {"cmd": 5})
    check_golden("receipts/invalid_input.txt", r)
    _, r = call(ctx, "NoSuchTool", {})
    check_golden("receipts/unknown_tool.txt", r)


def test_promoted_then_already_running_then_stop(ctx):
    args = {"cmd": "echo started; sleep 30", "login": False, "yield_time_ms": 200}
    env, r = call(ctx, "ExecCommand", args)
    res = env["result"]
    assert res["disposition"] == "promoted_to_task" and "exit_status" not in res
    assert res["initial_output_preview"] == "started\n"
    check_golden("receipts/exec_promoted.txt", r)
    env2, r2 = call(ctx, "ExecCommand", args)
    assert env2["result"]["disposition"] == "already_running"
    assert env2["result"]["task_handle"] == res["task_handle"]
    check_golden("receipts/exec_already_running.txt", r2)
    env3, _ = call(ctx, "ExecCommand", {**args, "duplicate_policy": "start_new"})
    assert env3["result"]["task_handle"] != res["task_handle"]
    for handle in (res["task_handle"], env3["result"]["task_handle"]):
        envs, _ = call(ctx, "TaskStop", {"task_id": handle["task_id"]})
        assert envs["result"]["stop_requested"] and envs["result"]["task"]["status"] == "cancelled"


def test_batch_grouped_receipt(ctx):
    env, r = call(
        ctx,
        "ExecCommandBatch",
        {
            "commands": [
                {"cmd": "echo one", "login": False},
                {"cmd": "sleep 5", "login": False, "yield_time_ms": 100},
                {"cmd": "echo three; exit 1", "login": False},
            ]
        },
    )
    items = env["result"]["items"]
    assert [i["status"] for i in items] == ["completed", "error", "completed"]
    assert items[1]["error"]["kind"] == "command_timeout" and items[2]["exit_status"] == 1
    check_golden("receipts/exec_batch.txt", r)


def test_task_output_and_status(ctx):
    env, _ = call(
        ctx, "ExecCommand", {"cmd": "sleep 0.3; echo fin", "login": False, "yield_time_ms": 50}
    )
    tid = env["result"]["task_handle"]["task_id"]
    st, _ = call(ctx, "TaskStatus", {"task_id": tid})
    assert "output_preview" not in json.dumps(st["result"])
    out, r = call(ctx, "TaskOutput", {"task_id": tid, "timeout_ms": 5000})
    assert out["result"]["retrieval_status"] == "success"
    t = out["result"]["task"]
    assert t["status"] == "completed" and t["exit_status"] == 0 and "fin" in t["output_preview"]
    assert t["artifacts"][t["output_artifact"]]["path"].endswith("output.log")
    check_golden("receipts/task_output.txt", r)
    _, r = call(ctx, "TaskInput", {"task_id": tid, "input": "x\n"})
    check_golden("receipts/task_input_rejected.txt", r)
    time.sleep(0.1)

"""ExecCommandBatch: sequential items, per-item errors, no promotion, budgets and the receipt."""

from __future__ import annotations

import pytest
from helpers import wait_for

from holon.agent.handle import Agent
from holon.procs import alive
from holon.tools import registry
from holon.tools.base import RenderPolicy, ToolContext
from holon.tools.exec_batch import ExecCommandBatch


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    from holon.home.layout import Home

    return ToolContext(agent=Agent(Home(home, "a")), execution_root=root, cwd=root)


def batch(ctx, *items, policy=None):
    if policy is not None:
        ctx.policy = policy
    out = registry.call(
        ctx, "ExecCommandBatch", {"commands": [{"login": False, **item} for item in items]}
    )
    return out.envelope, out.rendered


def test_items_run_in_order_in_their_workdirs(ctx):
    log = ctx.execution_root / "order.txt"
    env, rendered = batch(
        ctx,
        {"cmd": f"echo first >> {log}; pwd"},
        {"cmd": f"echo second >> {log}; pwd", "workdir": "sub"},
        {"cmd": "echo oops >&2; exit 4"},
    )
    items = env["result"]["items"]
    assert log.read_text() == "first\nsecond\n"
    assert [i["index"] for i in items] == [0, 1, 2]
    assert items[0]["stdout_preview"] == f"{ctx.execution_root}\n"
    assert items[1]["stdout_preview"] == f"{ctx.execution_root / 'sub'}\n"
    assert items[1]["workdir"] == str(ctx.execution_root / "sub")
    assert (items[2]["status"], items[2]["exit_status"], items[2]["stderr_preview"]) == (
        "completed",
        4,
        "oops\n",
    )
    assert env["summary_text"] == "batch of 3 command(s): 2 succeeded"
    assert env["result"]["items"][2]["error"] is None
    assert rendered.splitlines()[0] == "batch of 3 command(s): 2 succeeded"
    assert "=== [2] $ echo oops >&2; exit 4 -> exit 4 in " in rendered
    assert "--- stderr ---\noops" in rendered
    assert not ctx.home.tasks.exists()  # a batch never touches the task store


def test_timed_out_item_is_stopped_with_its_process_group(ctx):
    pidfile = ctx.execution_root / "bg.pid"
    env, rendered = batch(
        ctx,
        {"cmd": f"sleep 30 & echo $! > {pidfile}; wait", "yield_time_ms": 200},
        {"cmd": "echo after"},
    )
    first, second = env["result"]["items"]
    assert first["status"] == "error" and first["exit_status"] is None
    assert first["error"]["kind"] == "command_timeout" and first["error"]["details"]["signal"]
    assert second["stdout_preview"] == "after\n"
    bg = int(pidfile.read_text())
    wait_for(lambda: not alive(bg), timeout=3)
    assert "-> error: command_timeout: still running after 200 ms" in rendered
    assert not ctx.home.tasks.exists()


def test_spawn_failure_is_an_item_error(ctx):
    env, rendered = batch(ctx, {"cmd": "true", "shell": "/no/such/shell"}, {"cmd": "echo ok"})
    bad, good = env["result"]["items"]
    assert env["status"] == "success"
    assert bad["status"] == "error" and bad["error"]["kind"] == "spawn_failed"
    assert bad["error"]["details"] == {"shell": "/no/such/shell"}
    assert good["exit_status"] == 0
    assert env["summary_text"] == "batch of 2 command(s): 1 succeeded"


def test_workdir_outside_root_fails_the_whole_batch_before_running(ctx):
    marker = ctx.execution_root / "ran"
    env, rendered = batch(ctx, {"cmd": f"touch {marker}"}, {"cmd": "true", "workdir": "../.."})
    assert env["status"] == "error" and env["error"]["kind"] == "execution_root_violation"
    assert env["error"]["details"]["field"] == "commands.1.workdir"
    assert '"field": "commands.1.workdir"' in rendered
    assert not marker.exists()


@pytest.mark.parametrize(
    "commands,field",
    [
        ([], "commands"),
        ([{"cmd": "true"}] * 33, "commands"),
        ([{"cmd": ""}], "commands.0.cmd"),
        ([{"cmd": "true", "accepts_input": True}], "commands.0.accepts_input"),
    ],
)
def test_invalid_batches(ctx, commands, field):
    env = registry.call(ctx, "ExecCommandBatch", {"commands": commands}).envelope
    assert env["error"]["kind"] == "invalid_tool_input"
    assert env["error"]["details"]["field"] == field


def test_output_budget_is_shared_between_items_unless_given(ctx):
    cmd = "seq 1 5000"
    env, _ = batch(
        ctx,
        {"cmd": cmd},
        {"cmd": cmd},
        {"cmd": cmd, "max_output_tokens": 8000},
        policy=RenderPolicy(default_tokens=1000),
    )
    shared, _, own = env["result"]["items"]
    assert shared["truncated"] is True and len(shared["stdout_preview"]) < 4000 // 3 + 200
    assert shared["stdout_preview"].startswith("1\n") and shared["stdout_preview"].endswith(
        "5000\n"
    )
    assert own["truncated"] is False and own["stdout_preview"].count("\n") == 5000


def test_render_of_silent_item():
    env = {
        "summary_text": "batch of 1 command(s): 1 succeeded",
        "result": {
            "items": [
                {
                    "index": 0,
                    "cmd": "true",
                    "status": "completed",
                    "exit_status": 0,
                    "duration_ms": 3,
                    "stdout_preview": "",
                    "stderr_preview": "",
                    "error": None,
                }
            ]
        },
    }
    assert ExecCommandBatch().render(env, RenderPolicy()) == (
        "batch of 1 command(s): 1 succeeded\n=== [0] $ true -> exit 0 in 3 ms"
    )


def test_tool_contract():
    tool = registry.get("ExecCommandBatch")
    assert (tool.family, tool.mutates) == ("command", True)
    assert "never become background tasks" in tool.description
    item = tool.Args.model_json_schema()["$defs"]["BatchItem"]["properties"]
    assert "tty" not in item and item["yield_time_ms"]["default"] == 10000

"""ExecCommand pieces: workdir confinement, output budgets, signals, environment and receipts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tasks.command.command import Finished
from holon.tools import registry
from holon.tools.base import ToolContext, ToolFailure
from holon.tools.exec_command import (
    ExecCommand,
    ExecCommandArgs,
    completed_result,
    render_command,
    resolve_workdir,
    split_budget,
)


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return ToolContext(agent=Agent(Home(home, "a")), execution_root=root, cwd=root / "sub")


def test_workdir_resolves_from_cwd_inside_the_root(ctx):
    root = ctx.execution_root
    assert resolve_workdir(ctx, None) == root / "sub"
    assert resolve_workdir(ctx, "..") == root
    assert resolve_workdir(ctx, "./x/../") == root / "sub"
    assert resolve_workdir(ctx, str(root / "sub")) == root / "sub"


@pytest.mark.parametrize("workdir", ["../..", "/", "/tmp", "../../root2", "link_out"])
def test_workdir_outside_the_root_is_a_violation(ctx, workdir):
    root = ctx.execution_root
    (root.parent / "root2").mkdir(exist_ok=True)  # a sibling whose name extends the root's
    (root / "sub" / "link_out").symlink_to(root.parent)
    with pytest.raises(ToolFailure) as info:
        resolve_workdir(ctx, workdir)
    err = info.value
    assert err.kind == "execution_root_violation" and err.details["field"] == "workdir"
    assert err.details["execution_root"] == os.path.realpath(root)
    assert str(root / "sub") in err.recovery_hint


def test_symlink_inside_the_root_is_allowed(ctx):
    (ctx.execution_root / "sub" / "up").symlink_to(ctx.execution_root)
    assert resolve_workdir(ctx, "up") == ctx.execution_root / "sub" / "up"


@pytest.mark.parametrize(
    "out,err,budget,expected",
    [
        ("a" * 10, "b" * 10, 100, (100, 100)),  # everything fits: no split
        ("a" * 100, "b" * 100, 40, (30, 10)),  # stderr gets at most a quarter
        ("a" * 100, "b" * 3, 40, (37, 3)),  # a short stderr takes only what it needs
        ("", "b" * 100, 40, (1, 40)),  # no stdout: stderr gets the whole budget
        ("a" * 100, "", 40, (40, 1)),
    ],
    ids=["fits", "quarter", "short-stderr", "no-stdout", "no-stderr"],
)
def test_split_budget(out, err, budget, expected):
    assert split_budget(out, err, budget) == expected


def test_completed_result_writes_artifacts_for_cut_streams(ctx):
    out = "".join(f"out {i}\n" for i in range(100))
    err = "".join(f"err {i}\n" for i in range(100))
    res = completed_result(ctx, Finished(None, 9, out, err, 12), 400)
    assert res["exit_status"] is None and res["signal"] == 9 and res["truncated"] is True
    assert (res["stdout_artifact"], res["stderr_artifact"]) == (0, 1)
    assert [a["kind"] for a in res["artifacts"]] == ["stdout", "stderr"]
    assert Path(res["artifacts"][0]["path"]).read_text() == out
    assert Path(res["artifacts"][1]["path"]).read_text() == err
    assert res["artifacts"][1]["bytes"] == len(err)
    assert Path(res["artifacts"][0]["path"]).parent == ctx.home.artifacts
    small = completed_result(ctx, Finished(0, None, "ok\n", "", 1), 400)
    assert small["artifacts"] == [] and "signal" not in small and small["truncated"] is False


def test_killed_by_signal(ctx):
    out = registry.call(ctx, "ExecCommand", {"cmd": "echo before; kill -9 $PPID", "login": False})
    res = out.envelope["result"]
    assert res["disposition"] == "completed" and res["exit_status"] is None
    assert (
        res["signal"] == 9
        and out.envelope["summary_text"] == "command completed: killed by signal 9"
    )
    assert res["stdout_preview"] == "before\n"


def test_command_sees_agent_environment_and_workdir(ctx):
    out = registry.call(
        ctx, "ExecCommand", {"cmd": 'echo "$HOLON_AGENT_ID|$HOLON_AGENT_HOME|$PWD"', "login": False}
    )
    assert out.envelope["result"]["stdout_preview"] == (
        f"a|{ctx.home.root}|{ctx.execution_root / 'sub'}\n"
    )


def test_json_output_is_pretty_printed_and_rendered_as_text(ctx):
    out = registry.call(ctx, "ExecCommand", {"cmd": "printf '{\"k\": [1]}'", "login": False})
    assert out.envelope["result"]["stdout_preview"] == '{\n  "k": [\n    1\n  ]\n}\n'
    assert out.rendered.splitlines()[1:] == ["--- stdout ---", "{", '  "k": [', "    1", "  ]", "}"]


def test_silent_command_renders_no_output(ctx):
    out = registry.call(ctx, "ExecCommand", {"cmd": "true", "login": False})
    assert out.rendered.startswith("command completed: exit 0 in ")
    assert out.rendered.endswith(" ms\n(no output)")


def test_tty_cannot_refuse_input(ctx):
    env = registry.call(
        ctx, "ExecCommand", {"cmd": "true", "tty": True, "accepts_input": False}
    ).envelope
    assert env["error"]["kind"] == "invalid_tool_input"
    assert env["error"]["details"] == {"field": "accepts_input"}


@pytest.mark.parametrize(
    "tty,accepts,expected", [(False, None, False), (True, None, True), (False, True, True)]
)
def test_accepts_input_defaults_to_tty(ctx, tty, accepts, expected):
    args = ExecCommandArgs(cmd="cat", tty=tty, accepts_input=accepts)
    spec = ExecCommand().spec(ctx, args)
    assert spec.accepts_input is expected and spec.tty is tty
    assert spec.workdir == ctx.execution_root / "sub" and spec.login is True


def test_tty_command_completes_with_one_transcript(ctx):
    out = registry.call(
        ctx,
        "ExecCommand",
        {"cmd": "echo out; echo err >&2; tty -s && echo tty", "tty": True, "login": False},
    )
    res = out.envelope["result"]
    assert res["exit_status"] == 0 and res["stderr_preview"] == ""
    assert res["stdout_preview"].replace("\r\n", "\n") == "out\nerr\ntty\n"


def test_render_already_running_and_promoted():
    handle = {"task_id": "task_x", "kind": "command_task"}
    text = render_command(
        "already running as task task_x",
        {"disposition": "already_running", "task_handle": handle, "command": {"cmd": "make"}},
    )
    assert text.startswith("already running as task task_x: `make` (task_id task_x).")
    assert "duplicate_policy=start_new" in text
    promoted = {
        "disposition": "promoted_to_task",
        "task_handle": handle,
        "initial_output_preview": "",
        "command": {"cmd": "make"},
    }
    text = render_command("still running", promoted)
    assert text == (
        "still running (task_id task_x).\nEnd your turn; a task_result message wakes "
        "you when it finishes. Do not poll."
    )
    text = render_command("still running", {**promoted, "initial_output_preview": "step 1\n"})
    assert text.endswith("--- output so far ---\nstep 1")

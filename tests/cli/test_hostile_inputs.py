"""Poison input through the real CLI: every refusal is `invalid_input`-class (exit 2) with one
error line and a hint, never `internal_error`, never a hang, never a file named by a hostile id."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import holon_cmd, run, subprocess_env

from holon.cli.inputs import MAX_INPUT_BYTES


def refused(proc: subprocess.CompletedProcess, kind: str | None = None, code: int = 2) -> str:
    err = proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stdout, err)
    assert "internal_error" not in err and "Traceback" not in err, err
    first = err.splitlines()[0]
    assert first.startswith("holon: "), err
    if kind:
        assert first.startswith(f"holon: {kind}: "), err
    assert len(first) < 700, first
    assert err.splitlines()[1].startswith("hint: "), err
    return err


@pytest.fixture
def a(holon_env: Path) -> Path:
    assert run("init", "--agent-id", "a").returncode == 0
    return holon_env / "agents" / "a"


# -- JSON bodies and --input ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000,
        "[" * 70 + "]" * 70,
        '{"a": NaN}',
        '{"a": Infinity}',
        "1e400",
        '"\\ud800"',
        "[1,",
    ],
    ids=["deep-100k", "deep-70", "nan", "infinity", "overflow", "surrogate", "truncated"],
)
def test_enqueue_refuses_json_that_could_not_be_queued(a: Path, body: str) -> None:
    proc = run("enqueue", "a", "--kind", "channel_event", "--json-body", body)
    refused(proc, "invalid_json")
    assert not list((a / ".holon" / "queue" / "new").iterdir())


def test_a_json_body_of_any_json_type_runs_a_turn(a: Path, script) -> None:
    model = script(*[{"text": "ok"}] * 4)
    for body in ("[1,2]", '"x"', "null", "7"):
        assert run("enqueue", "a", "--kind", "channel_event", "--json-body", body).returncode == 0
    proc = run("tick", "a", "--until-idle", "--model", model)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(" completed") == 4


@pytest.mark.parametrize("target", ["dir", "/dev/zero", "fifo", "missing"])
def test_input_at_path_must_be_a_regular_file(a: Path, tmp_path: Path, target: str) -> None:
    path = {"dir": str(tmp_path), "/dev/zero": "/dev/zero", "missing": str(tmp_path / "nope")}
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
        path["fifo"] = str(tmp_path / "fifo")
    for argv in (
        ["tool", "call", "a", "ExecCommand", "--input", "@" + path[target]],
        ["enqueue", "a", "--kind", "webhook_event", "--json-body", "@" + path[target]],
    ):
        refused(run(*argv, timeout=20), "invalid_json")


def test_stdin_is_capped(a: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [*holon_cmd(), "enqueue", "a", "--kind", "webhook_event", "--json-body", "-"],
            stdin=zero,
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
        )
    refused(proc, "oversize_input")
    assert str(MAX_INPUT_BYTES) in proc.stderr


def test_enqueue_labels_are_one_short_line(a: Path) -> None:
    for bad in ("x\ny", "a" * 300, "\x1b[2J"):
        proc = run("enqueue", "a", "--kind", "channel_event", "--text", "hi", "--source", bad)
        refused(proc, "invalid_input")


def test_argv_that_is_not_utf8_is_refused(a: Path) -> None:
    proc = subprocess.run(
        [*holon_cmd(), "enqueue", "a", "--kind", "channel_event", "--text", b"\xff\xfe"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    refused(proc, "invalid_utf8")


# -- identifiers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["a" * 300, "a\n", "a/b", "..", "../a", "a\x01", ".hidden"], ids=repr
)
def test_hostile_agent_ids(holon_env: Path, bad: str) -> None:
    refused(run("init", "--agent-id", bad), "invalid_agent_id")
    err = refused(run("status", bad), "unknown_agent")
    assert len(err) < 1200


@pytest.mark.parametrize("bad", ["../../x", "a/b", "..", ".x", "a" * 300, "a\n"], ids=repr)
def test_hostile_ids_never_become_paths(a: Path, bad: str) -> None:
    for argv in (
        ("task", "status", "a", bad),
        ("task", "output", "a", bad),
        ("task", "stop", "a", bad),
        ("task", "input", "a", bad, "x"),
    ):
        refused(run(*argv), "unknown_task")  # an id that is no file name names no task
    refused(run("timer", "cancel", "a", bad), "unknown_timer")


def test_check_id_rules() -> None:
    from holon.errors import InvalidInput
    from holon.ids import check_id, is_id

    assert all(is_id(x) for x in ("a", "tsk_0abc", "a.b-c_d", "_x", "a" * 128))
    bad = ["", ".", "..", ".a", "a/b", "a\n", "a\x00", "a b", "a" * 129, "é", None, 3]
    assert not any(is_id(x) for x in bad)
    with pytest.raises(InvalidInput) as exc:
        check_id("x" * 5000, "task id")
    assert exc.value.kind == "invalid_id" and len(exc.value.message) < 300


# -- tools ----------------------------------------------------------------------------------


def call(*args: str) -> tuple[int, dict]:
    proc = run("tool", "call", *args)
    assert "internal_error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize(
    "arguments,field",
    [
        ({"cmd": "ls\x00x"}, "cmd"),
        ({"cmd": "ls", "workdir": "sub\x00x"}, "workdir"),
        ({"cmd": "ls", "shell": "/bin/sh\x00"}, "shell"),
        ({"cmd": "true", "yield_time_ms": True}, "yield_time_ms"),
        ({"cmd": "true", "yield_time_ms": "5"}, "yield_time_ms"),
        ({"cmd": "true", "yield_time_ms": 1.5}, "yield_time_ms"),
        ({"cmd": "true", "yield_time_ms": 10**30}, "yield_time_ms"),
        ({"cmd": "true", "login": "yes"}, "login"),
        ({"cmd": 5}, "cmd"),
    ],
    ids=lambda v: repr(v)[:40],
)
def test_exec_command_arguments_are_strict(a: Path, arguments: dict, field: str) -> None:
    code, env = call("a", "ExecCommand", "--input", json.dumps(arguments))
    assert code == 1 and env["status"] == "error", env
    assert env["error"]["kind"] == "invalid_tool_input", env
    assert env["error"]["details"]["field"].startswith(field), env


@pytest.mark.parametrize(
    "name,arguments",
    [
        ("Sleep", {"duration_ms": True}),
        ("Sleep", {"duration_ms": 10**20}),
        ("TaskStatus", {"task_id": "../../etc"}),
        ("TaskOutput", {"task_id": "x", "block": 1}),
        ("UpdateWorkItem", {"work_item_id": "w", "recheck_after": 10**20}),
    ],
)
def test_other_tools_refuse_bad_arguments(a: Path, name: str, arguments: dict) -> None:
    code, env = call("a", name, "--input", json.dumps(arguments))
    assert code == 1 and env["status"] == "error", env
    assert env["error"]["kind"] in ("invalid_tool_input", "task_not_found", "unknown_work_item")


def test_nan_in_tool_input_is_refused_by_the_cli(a: Path) -> None:
    refused(run("tool", "call", "a", "Sleep", "--input", '{"duration_ms": NaN}'), "invalid_json")


def test_a_tool_error_never_echoes_a_huge_input(a: Path, tmp_path: Path) -> None:
    big = "k" * 1_000_000
    (tmp_path / "in.json").write_text(json.dumps({big: 1, "cmd": "true"}))
    code, env = call("a", "ExecCommand", "--input", f"@{tmp_path / 'in.json'}")
    assert code == 1 and env["error"]["kind"] == "invalid_tool_input"
    assert len(json.dumps(env)) < 5000
    (tmp_path / "in2.json").write_text(json.dumps({"task_id": big}))
    code, env = call("a", "TaskStatus", "--input", f"@{tmp_path / 'in2.json'}")
    assert code == 1 and len(json.dumps(env)) < 5000


def test_unknown_tool_name_is_bounded(a: Path) -> None:
    err = refused(run("tool", "call", "a", "x" * 10_000), "unknown_tool")
    assert len(err) < 2000


def test_task_output_wait_is_bounded(a: Path) -> None:
    for bad in ("nan", "inf", "1e300", "-1"):
        proc = run("task", "output", "a", "tsk_x", "--wait", bad)
        assert proc.returncode == 2 and "holon: usage: " in proc.stderr, proc.stderr


# -- lock timeouts --------------------------------------------------------------------------


def test_a_lock_timeout_is_reported_as_busy(a: Path, monkeypatch, capsys) -> None:
    from holon.agent import timers
    from holon.cli.main import main
    from holon.store.locks import LockBusy

    def busy(*_a, **_kw):
        raise LockBusy(str(a / ".holon" / "locks" / "state.lock"))

    monkeypatch.setattr(timers, "build", busy)
    assert main(["timer", "create", "a", "--after", "1h"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("holon: busy: another holon process holds the lock ")
    assert err[1].startswith("hint: ") and len(err) == 2


def test_an_agent_named_like_an_unknown_users_home_is_unknown(a: Path) -> None:
    proc = run("model", "clear", "~nosuchuser0")
    assert proc.returncode == 2 and proc.stderr.startswith("holon: unknown_agent: "), proc.stderr


def test_an_expect_pattern_that_warns_is_no_internal_error(a: Path) -> None:
    proc = run("task", "input", "a", "tsk_none", "x", "--expect", "[[")
    assert "internal_error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr

"""Starting commands directly: wrapper exit file, own process group, pipes or a pty, kill_group."""

from __future__ import annotations

import os
import time

import pytest
from helpers import wait_for

from holon.procs import group_members
from holon.tasks import spawn


def start(tmp_path, cmd, **kw):
    opts = {
        "workdir": tmp_path,
        "shell": "/bin/sh",
        "login": False,
        "tty": False,
        "accepts_input": False,
        "exit_file": tmp_path / "exit_status",
        "env_extra": {},
    }
    return spawn.start(cmd, **{**opts, **kw})


def finish(run, seconds=5.0):
    """Collect until the command ends, then release its pipes."""
    try:
        assert spawn.collect(run, time.monotonic() + seconds)
        return run.proc.wait()
    finally:
        spawn.close(run)


def test_output_streams_exit_file_and_environment(tmp_path):
    run = start(
        tmp_path, 'echo out; echo err >&2; echo "$X_VAR"; exit 5', env_extra={"X_VAR": "extra"}
    )
    assert finish(run) == 5
    assert run.text("stdout") == "out\nextra\n" and run.text("stderr") == "err\n"
    assert {s for s, _ in run.chunks} == {"stdout", "stderr"}
    assert (tmp_path / "exit_status").read_text() == "5\n"
    assert run.fds == {} and run.stdin_fd is None and not run.tty


def test_exit_file_is_skipped_silently_when_its_directory_is_missing(tmp_path):
    run = start(tmp_path, "echo hi", exit_file=tmp_path / "missing" / "exit_status")
    assert finish(run) == 0
    assert run.text() == "hi\n" and not (tmp_path / "missing").exists()


def test_command_leads_its_own_process_group(tmp_path):
    run = start(tmp_path, "ps -o pgid= -p $$; sleep 0.1")
    assert finish(run) == 0
    assert int(run.text("stdout")) == run.proc.pid != os.getpgid(0)


@pytest.mark.parametrize("login,expected", [(True, "login\n"), (False, "plain\n")])
def test_login_flag(tmp_path, login, expected):
    run = start(
        tmp_path, "shopt -q login_shell && echo login || echo plain", shell="bash", login=login
    )
    finish(run)
    assert run.text("stdout") == expected


def test_stdin_pipe_when_accepting_input(tmp_path):
    run = start(tmp_path, "cat", accepts_input=True)
    assert run.stdin_fd == run.proc.stdin.fileno()
    os.write(run.stdin_fd, b"fed\n")
    run.proc.stdin.close()  # EOF for cat
    run.stdin_fd = None
    assert finish(run) == 0
    assert run.text() == "fed\n"


def test_stdin_is_devnull_otherwise(tmp_path):
    run = start(tmp_path, "cat; echo end")
    assert run.stdin_fd is None
    assert finish(run) == 0 and run.text() == "end\n"


def test_tty_gets_a_terminal_and_one_stream(tmp_path):
    run = start(tmp_path, "tty -s && echo is-tty; echo err >&2", tty=True)
    assert run.tty and set(run.fds.values()) == {"tty"} and run.stdin_fd in run.fds
    assert finish(run) == 0
    assert run.text().replace("\r\n", "\n") == "is-tty\nerr\n"
    assert {s for s, _ in run.chunks} == {"tty"}


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"workdir": "/no/such/dir"}, "does not exist"),
        ({"shell": "/no/such/shell"}, "was not found"),
        ({"shell": "no-such-shell-xyz"}, "was not found"),
    ],
)
def test_spawn_errors(tmp_path, kw, needle):
    with pytest.raises(spawn.SpawnError) as info:
        start(tmp_path, "true", **kw)
    assert needle in str(info.value) and info.value.details


def test_shell_found_on_path(tmp_path):
    run = start(tmp_path, "echo $0", shell="sh")
    finish(run)
    assert run.text().strip().endswith("sh")


def test_collect_returns_false_at_the_deadline_then_kill_group(tmp_path):
    run = start(tmp_path, "echo early; sleep 30 & sleep 30 & wait")
    try:
        assert spawn.collect(run, time.monotonic() + 0.3) is False
        assert run.text() == "early\n" and len(group_members(run.proc.pid)) >= 3
        assert spawn.kill_group(run.proc.pid, grace=2.0) == "terminated"
        assert run.proc.wait(timeout=5) < 0
        assert group_members(run.proc.pid) == []
    finally:
        spawn.close(run)


def test_kill_group_escalates_to_kill(tmp_path):
    run = start(tmp_path, "trap '' TERM; sleep 30 & wait")
    try:
        time.sleep(0.2)  # let the trap be installed
        t0 = time.monotonic()
        assert spawn.kill_group(run.proc.pid, grace=0.3) == "killed"
        assert time.monotonic() - t0 >= 0.3
        run.proc.wait(timeout=5)  # the wrapper took the TERM; the trapping shell needed KILL
        wait_for(lambda: group_members(run.proc.pid) == [], timeout=2)  # SIGKILL is async
    finally:
        spawn.close(run)


def test_kill_group_of_nothing_is_gone():
    assert spawn.kill_group(2**22 + 12345) == "gone"


def test_close_is_idempotent(tmp_path):
    run = start(tmp_path, "true", accepts_input=True)
    finish(run)
    spawn.close(run)
    assert run.fds == {} and run.stdin_fd is None

"""Starting commands directly: wrapper exit file, own process group, pipes, kill_group;
and once through the agent's real sandbox (confine.prepare with the default policy)."""

from __future__ import annotations

import os
import socket
import time

import pytest
from helpers import wait_for

from holon.procs import group_members
from holon.sandbox import confine, landlock
from holon.sandbox.confine import Confinement
from holon.sandbox.policy import Policy
from holon.tasks import store
from holon.tasks.command import spawn


@pytest.fixture
def start(unconfined):
    """spawn.start without a sandbox; `env_extra` adds variables to the whole environment."""

    def start_(tmp_path, cmd, env_extra=None, **kw):
        opts = {
            "workdir": tmp_path,
            "shell": "/bin/sh",
            "login": False,
            "accepts_input": False,
            "exit_file": tmp_path / "exit_status",
            "confinement": unconfined("a", tmp_path, **(env_extra or {})),
        }
        return spawn.start(cmd, **{**opts, **kw})

    return start_


def finish(run, seconds=5.0):
    """Collect until the command ends, then release its pipes."""
    try:
        assert spawn.collect(run, time.monotonic() + seconds)
        return run.proc.wait()
    finally:
        spawn.close(run)


def test_output_streams_exit_file_and_environment(tmp_path, start):
    run = start(
        tmp_path, 'echo out; echo err >&2; echo "$X_VAR"; exit 5', env_extra={"X_VAR": "extra"}
    )
    assert finish(run) == 5
    assert run.text("stdout") == "out\nextra\n" and run.text("stderr") == "err\n"
    assert {s for s, _ in run.chunks} == {"stdout", "stderr"}
    assert (tmp_path / "exit_status").read_text() == "5\n"
    assert run.fds == {} and run.stdin_fd is None


def test_exit_file_is_skipped_silently_when_its_directory_is_missing(tmp_path, start):
    run = start(tmp_path, "echo hi", exit_file=tmp_path / "missing" / "exit_status")
    assert finish(run) == 0
    assert run.text() == "hi\n" and not (tmp_path / "missing").exists()


def test_command_leads_its_own_process_group(tmp_path, start):
    run = start(tmp_path, "ps -o pgid= -p $$; sleep 0.1")
    assert finish(run) == 0
    assert int(run.text("stdout")) == run.proc.pid != os.getpgid(0)


@pytest.mark.parametrize("login,expected", [(True, "plain\n"), (False, "plain\n")])
def test_login_flag(tmp_path, login, expected, start):
    """A login command runs in a plain shell with the login shell's environment
    (holon.tasks.command.loginenv, tests/tasks/test_login_env.py): no profile runs per command."""
    run = start(
        tmp_path, "shopt -q login_shell && echo login || echo plain", shell="bash", login=login
    )
    finish(run)
    assert run.text("stdout") == expected


def test_stdin_pipe_when_accepting_input(tmp_path, start):
    run = start(tmp_path, "cat", accepts_input=True)
    assert run.stdin_fd == run.proc.stdin.fileno()
    os.write(run.stdin_fd, b"fed\n")
    run.proc.stdin.close()  # EOF for cat
    run.stdin_fd = None
    assert finish(run) == 0
    assert run.text() == "fed\n"


def test_stdin_is_devnull_otherwise(tmp_path, start):
    run = start(tmp_path, "cat; echo end")
    assert run.stdin_fd is None
    assert finish(run) == 0 and run.text() == "end\n"


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"workdir": "/no/such/dir"}, "does not exist"),
        ({"shell": "/no/such/shell"}, "was not found"),
        ({"shell": "no-such-shell-xyz"}, "was not found"),
    ],
)
def test_spawn_errors(tmp_path, kw, needle, start):
    with pytest.raises(spawn.SpawnError) as info:
        start(tmp_path, "true", **kw)
    assert needle in str(info.value) and info.value.details


def test_shell_found_on_path(tmp_path, start):
    run = start(tmp_path, "echo $0", shell="sh")
    finish(run)
    assert run.text().strip().endswith("sh")


def test_collect_returns_false_at_the_deadline_then_kill_group(tmp_path, start):
    run = start(tmp_path, "echo early; sleep 30 & sleep 30 & wait")
    try:
        assert spawn.collect(run, time.monotonic() + 0.3) is False
        assert run.text() == "early\n" and len(group_members(run.proc.pid)) >= 3
        assert spawn.kill_group(run.proc.pid, grace=2.0) == "terminated"
        assert run.proc.wait(timeout=5) < 0
        assert group_members(run.proc.pid) == []
    finally:
        spawn.close(run)


def test_kill_group_escalates_to_kill(tmp_path, start):
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


def test_close_is_idempotent(tmp_path, start):
    run = start(tmp_path, "true", accepts_input=True)
    finish(run)
    spawn.close(run)
    assert run.fds == {} and run.stdin_fd is None


@pytest.fixture
def listener():
    """A TCP port on 127.0.0.1 that accepts connections."""
    sock = socket.create_server(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


CONNECT = "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo no-connect"


def test_unconfined_command_may_connect(tmp_path, start, listener):
    run = start(tmp_path, CONNECT.format(port=listener), shell="bash")
    assert finish(run) == 0 and run.text("stdout") == "connected\n"


def test_default_sandbox_confines_the_command(agent, monkeypatch, listener):
    """Through confine.prepare with the default workspace-write policy, network denied: the
    workspace, the temp dirs and the scratch dir are writable, `.holon/` is read-only, connect is
    refused, secret-looking variables are gone, and the exit file lands in the scratch dir."""
    monkeypatch.setenv("MY_API_KEY", "secret")
    monkeypatch.setenv("PLAIN_VAR", "plain")
    other = store.make_scratch(agent, "task_other")
    scratch = store.make_scratch(agent, "task_sbx")
    conf = confine.prepare(agent, execution_root=agent.root, workdir=agent.root, scratch=scratch)
    assert conf.policy.label == "workspace-write,network=deny"
    assert conf.enforcement == "landlock+mountns" and conf.ruleset is not None
    assert "MY_API_KEY" not in conf.env and conf.env["PLAIN_VAR"] == "plain"
    cmd = "; ".join(
        [
            'echo "$HOLON_SANDBOX|$HOLON_AGENT_ID|$HOLON_AGENT_HOME|${MY_API_KEY-unset}|"'
            '"$PLAIN_VAR"',
            "echo w > ws.txt && echo ws-ok",
            f"echo s > {scratch}/own && echo scratch-ok",
            "echo x > .holon/x || echo dot-refused",
            f"echo o > {other}/own || echo other-scratch-refused",
            CONNECT.format(port=listener),
        ]
    )
    run = spawn.start(
        cmd,
        workdir=agent.root,
        shell="bash",
        login=False,
        accepts_input=False,
        exit_file=scratch / "exit_status",
        confinement=conf,
    )
    assert conf.ruleset is None  # the parent's ruleset fd is released once the child started
    assert finish(run) == 0
    assert run.text("stdout").splitlines() == [
        f"workspace-write,network=deny|a|{agent.root}|unset|plain",
        "ws-ok",
        "scratch-ok",
        "dot-refused",
        "other-scratch-refused",
        "no-connect",
    ]
    assert "Read-only file system" in run.text("stderr")
    assert (agent.root / "ws.txt").read_text() == "w\n" and (scratch / "own").read_text() == "s\n"
    assert not (agent.dot / "x").exists() and not (other / "own").exists()
    assert (scratch / "exit_status").read_text() == "0\n"
    assert store.read_exit_status(agent, "task_sbx") == 0
    store.remove_scratch(agent, "task_sbx")
    assert not scratch.exists()


def test_a_sandbox_that_cannot_be_applied_is_a_spawn_error(tmp_path):
    def refuse():
        raise OSError(1, "no sandbox here")

    abi = landlock.abi()
    ruleset = landlock.Ruleset(abi, deny_tcp=False) if abi else None
    conf = Confinement(Policy(), dict(os.environ), "landlock", preexec=refuse, ruleset=ruleset)
    with pytest.raises(spawn.SpawnError) as info:
        spawn.start(
            "echo never > ran",
            workdir=tmp_path,
            shell="/bin/sh",
            login=False,
            accepts_input=False,
            exit_file=tmp_path / "exit_status",
            confinement=conf,
        )
    assert "could not confine the command (landlock)" in str(info.value)
    assert info.value.details == {"sandbox": "workspace-write,network=deny"}
    assert conf.ruleset is None and not (tmp_path / "ran").exists()
    assert not (tmp_path / "exit_status").exists()


def test_a_refused_spawn_releases_the_sandbox_ruleset(tmp_path):
    """A missing workdir or shell is refused before any child: the parent's ruleset fd closes."""
    from holon.home.layout import Home

    if landlock.abi() == 0:
        pytest.skip("needs Landlock")
    home = Home(tmp_path)
    (tmp_path / ".holon").mkdir()
    for kw in (
        {"workdir": tmp_path / "missing", "shell": "/bin/sh"},
        {"workdir": tmp_path, "shell": "no-such-shell"},
    ):
        conf = confine.prepare(home, execution_root=tmp_path, workdir=tmp_path, scratch=tmp_path)
        fd = conf.ruleset.fd
        with pytest.raises(spawn.SpawnError):
            spawn.start(
                "true",
                login=False,
                accepts_input=False,
                exit_file=tmp_path / "x",
                confinement=conf,
                **kw,
            )
        assert conf.ruleset is None
        with pytest.raises(OSError):
            os.fstat(fd)

"""command.run: finished within the yield, stopped when promotion is off, or promoted to a task;
always in the agent's sandbox, with a filtered environment and its own scratch directory."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from helpers import wait_for

from holon.agent.handle import Agent
from holon.errors import OperationFailed
from holon.procs import alive
from holon.sandbox import policy
from holon.sandbox.policy import Policy
from holon.store import jsonl
from holon.tasks import store
from holon.tasks.command import command, spawn
from holon.tasks.command.outcome import CommandSpec


def spec(
    home, cmd, *, yield_ms=5000, tty=False, accepts_input=False, workdir=None, shell="/bin/sh"
):
    return command.CommandSpec(
        cmd, workdir or home.root, shell, False, tty, accepts_input, yield_ms, home.root
    )


def no_scratch_left(home):
    """No command's scratch directory is left behind."""
    return not home.scratch.exists() or list(home.scratch.iterdir()) == []


def test_default_shell_is_bash_when_present():
    shell = command.default_shell()
    assert shell in ("/bin/bash", "/bin/sh") and os.access(shell, os.X_OK)
    assert shell == ("/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh")


def test_spec_identity_and_metadata(agent):
    s = spec(agent, "make")
    assert command.CommandSpec is CommandSpec  # re-exported where callers have always found it
    assert s.digest == store.cmd_digest("make", str(agent.root), "/bin/sh", False, False)
    assert s.metadata() == {
        "cmd": "make",
        "cmd_digest": s.digest,
        "workdir": str(agent.root),
        "shell": "/bin/sh",
        "login": False,
        "tty": False,
        "accepts_input": False,
        "execution_root": str(agent.root),
    }


def test_finished_within_the_yield_touches_no_task_store(agent):
    out = command.run(Agent(agent), spec(agent, 'echo "$HOLON_AGENT_ID"; echo e >&2; exit 7'))
    assert isinstance(out, command.Finished)
    assert (out.exit_status, out.signal, out.stdout, out.stderr) == (7, None, "a\n", "e\n")
    assert 0 <= out.duration_ms < 5000
    assert store.all_records(agent) == [] and store.active_ids(agent) == []
    assert not any(p.is_dir() and p.name != "active" for p in agent.tasks.iterdir())
    assert agent.scratch.is_dir() and no_scratch_left(agent)  # made for the command, then removed


def test_tty_finished_output_is_one_stream(agent):
    out = command.run(Agent(agent), spec(agent, "echo a; echo b >&2", tty=True))
    assert out.stderr == "" and out.stdout.replace("\r\n", "\n") == "a\nb\n"
    assert no_scratch_left(agent)


def test_no_promotion_stops_the_command(agent, tmp_path):
    pidfile = tmp_path / "pid"
    out = command.run(
        Agent(agent),
        spec(agent, f"echo $$ > {pidfile}; echo partial; sleep 30", yield_ms=200),
        promote=False,
    )
    assert isinstance(out, command.Finished)
    assert out.exit_status is None and out.signal in (9, 15) and out.stdout == "partial\n"
    wait_for(lambda: not alive(int(pidfile.read_text())), timeout=3)
    assert store.all_records(agent) == [] and no_scratch_left(agent)


def test_spawn_error_propagates(agent):
    with pytest.raises(spawn.SpawnError):
        command.run(Agent(agent), spec(agent, "true", workdir=agent.root / "nope"))
    assert store.all_records(agent) == [] and no_scratch_left(agent)


def test_promoted_task_record_then_completion(agent):
    cmd = "echo first; sleep 0.4; echo second"
    out = command.run(Agent(agent), spec(agent, cmd, yield_ms=150), parent_message_id="msg_parent")
    assert isinstance(out, command.Promoted)
    task = out.task
    tid = task["id"]
    assert out.initial_output == "first\n" and out.duration_ms >= 150
    assert task["status"] == "running" and task["parent_message_id"] == "msg_parent"
    assert task["command"]["output_path"] == str(agent.task_dir(tid) / "output.log")
    assert task["command"]["terminal_reentry"] is True
    assert task["command"]["cmd_digest"] == spec(agent, cmd).digest
    assert os.getpgid(task["pid"]) == task["pid"]  # the wrapper leads the command's group
    scratch = agent.scratch_dir(tid)
    sup = store.read_marker(agent, tid)
    assert sup and sup == task["supervisor_pid"] and alive(sup) and sup != task["pid"]
    assert store.find_running(agent, task["command"]["cmd_digest"])["id"] == tid
    wait_for(lambda: store.load(agent, tid)["result_message_id"], timeout=10)
    rec = store.load(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("completed", 0)
    assert rec["supervisor_pid"] == sup
    assert (agent.task_dir(tid) / "output.log").read_text() == "first\nsecond\n"
    assert not (agent.task_dir(tid) / "exit_status").exists()  # 0 came from the scratch dir
    # removed by results.finish just after the marker, once the task_result is admitted
    wait_for(lambda: not scratch.exists(), timeout=5)
    assert no_scratch_left(agent)
    assert store.active_ids(agent) == []
    [msg] = [m for m in jsonl.read(agent.messages) if m["kind"] == "task_result"]
    assert msg["task_id"] == tid and msg["causation_id"] == "msg_parent"
    assert msg["body"]["value"]["output_preview"] == "first\nsecond\n"
    wait_for(lambda: not alive(sup), timeout=5)


def test_promoted_command_keeps_its_scratch_dir_until_the_task_ends(agent, tmp_path):
    go = tmp_path / "go"
    cmd = f"until [ -e {go} ]; do sleep 0.05; done; exit 6"
    out = command.run(Agent(agent), spec(agent, cmd, yield_ms=100))
    assert isinstance(out, command.Promoted)
    tid, pid = out.task["id"], out.task["pid"]
    scratch = agent.scratch_dir(tid)
    assert scratch.is_dir() and stat.S_IMODE(scratch.stat().st_mode) == 0o700
    assert list(scratch.iterdir()) == [] and store.read_exit_status(agent, tid) is None
    # the wrapper writes its exit file into the scratch dir, not the task dir
    exit_file = str(scratch / "exit_status").encode()
    assert exit_file in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    go.touch()
    wait_for(lambda: store.load(agent, tid)["result_message_id"], timeout=10)
    rec = store.load(agent, tid)
    assert (rec["status"], rec["exit_status"]) == ("failed", 6)
    assert not (agent.task_dir(tid) / "exit_status").exists()  # 6 came from the scratch dir
    wait_for(lambda: not scratch.exists(), timeout=5)
    assert no_scratch_left(agent)


SECRETS = {
    "GITHUB_TOKEN": "t",
    "MY_API_KEY": "k",
    "AWS_SECRET_ACCESS_KEY": "s",
    "DB_PASSWORD": "p",
    "LDAP_PASSWD": "p",
    "GCP_CREDENTIALS": "c",
    "HTTP_AUTH_HEADER": "a",
    "lower_token": "l",
}


def env_of(out):
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


def test_environment_is_filtered_and_names_the_agent(agent, monkeypatch):
    for name, value in {**SECRETS, "PLAIN_VAR": "plain"}.items():
        monkeypatch.setenv(name, value)
    out = command.run(Agent(agent), spec(agent, "env"))
    env = env_of(out)
    assert out.exit_status == 0 and not set(SECRETS) & set(env)
    assert env["PLAIN_VAR"] == "plain" and env["PATH"] == os.environ["PATH"]
    assert (env["HOLON_AGENT_ID"], env["HOLON_AGENT_HOME"]) == ("a", str(agent.root))
    assert env["HOLON_SANDBOX"] == "workspace-write,network=deny"


def test_pass_env_lets_named_secrets_through(agent, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    policy.write(agent, Policy(pass_env=("GITHUB_TOKEN", "AWS_*")))
    env = env_of(command.run(Agent(agent), spec(agent, "env")))
    assert env["GITHUB_TOKEN"] == "t" and env["AWS_SECRET_ACCESS_KEY"] == "s"
    assert not (set(SECRETS) - {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"}) & set(env)


def test_default_sandbox_workspace_writable_dot_holon_read_only(agent, tmp_path):
    (agent.root / "sub").mkdir()
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    cmd = (
        "echo w > ../ws.txt && echo ws-ok; echo t > $TMPDIR/t.txt && echo tmp-ok; "
        "echo x > ../.holon/probe || echo dot-refused; "
        "echo y > /var/holon-probe-$$ || echo outside-refused; "
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) || echo no-connect"
    )
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    try:
        out = command.run(
            Agent(agent),
            spec(agent, f"TMPDIR={tmp}; {cmd}", workdir=agent.root / "sub", shell="bash"),
        )
    finally:
        sock.close()
    assert out.stdout.splitlines() == [
        "ws-ok",
        "tmp-ok",
        "dot-refused",
        "outside-refused",
        "no-connect",
    ]
    assert "Read-only file system" in out.stderr and "Permission denied" in out.stderr
    assert (agent.root / "ws.txt").read_text() == "w\n" and (tmp / "t.txt").exists()
    assert not (agent.dot / "probe").exists()
    assert no_scratch_left(agent)


def test_full_access_policy_writes_anywhere_but_dot_holon(agent, tmp_path):
    """full-access lifts the workspace and network limits, never the read-only `.holon/`."""
    policy.write(agent, Policy(mode="full-access", network="allow"))
    sock = socket.create_server(("127.0.0.1", 0))
    outside = Path("/var") / f"holon-probe-{os.getpid()}"
    cmd = (
        f'echo "$HOLON_SANDBOX"; echo y > {outside} && echo outside-ok; '
        f"(exec 3<>/dev/tcp/127.0.0.1/{sock.getsockname()[1]}) && echo connected; "
        "echo x > .holon/probe || echo dot-refused"
    )
    try:
        out = command.run(Agent(agent), spec(agent, cmd, shell="/bin/bash"))
        assert out.stdout.splitlines() == [
            "full-access,network=allow",
            "outside-ok",
            "connected",
            "dot-refused",
        ]
        assert outside.read_text() == "y\n" and "Read-only file system" in out.stderr
    finally:
        sock.close()
        outside.unlink(missing_ok=True)
    assert not (agent.dot / "probe").exists() and no_scratch_left(agent)


def test_an_invalid_sandbox_policy_starts_nothing(agent, tmp_path):
    agent.sandbox_json.write_text('{"mode": "wide-open"}')
    marker = tmp_path / "ran"
    with pytest.raises(OperationFailed) as info:
        command.run(Agent(agent), spec(agent, f"touch {marker}"))
    assert info.value.kind == "invalid_sandbox_config"
    assert not marker.exists() and store.all_records(agent) == [] and no_scratch_left(agent)


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return False


def test_promoted_wrappers_are_reaped_and_finished_tasks_drop_their_fifo(agent):
    """A long-lived caller (holon watch) keeps no zombie per promoted task; a finished task's
    directory keeps no fifo."""
    out = command.run(Agent(agent), spec(agent, "sleep 0.3", yield_ms=50, accepts_input=True))
    assert isinstance(out, command.Promoted)
    pid, task_id = out.task["pid"], out.task["id"]
    fifo = agent.task_dir(task_id) / "stdin.fifo"
    assert fifo.exists()
    wait_for(lambda: store.load(agent, task_id)["result_message_id"], timeout=10)
    wait_for(lambda: zombie(pid), timeout=5)  # ended, and still this process's child
    command.reap_handed_over()
    assert not zombie(pid) and pid not in command._HANDED_OVER
    # The supervisor drops the fifo after it has admitted the result: wait for that step.
    wait_for(lambda: not fifo.exists(), timeout=10)

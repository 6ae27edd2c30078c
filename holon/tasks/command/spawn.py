"""Start a command directly, collect its output until it ends or its yield
expires, then hand it off.

Design (measured against the ExecCommand-of-`true` benchmark):

* Fast path. The command is started directly by the calling process (the
  tick) with `Popen(start_new_session=True)` — its own session and process
  group, `HOLON_AGENT_ID` / `HOLON_AGENT_HOME` in its environment — under a
  tiny wrapper shell: `/bin/sh -c '"$@"; s=$?; { echo $s >"$0"; } 2>/dev/null;
  exit $s' <exit-file> <shell> [-l] -c <cmd>`. Output is read from pipes with
  a selector until the command ends or `yield_time_ms` passes. A command that
  ends in time never touches the task store: no directory, no supervisor, no
  extra Python process.

* Promotion. At the yield deadline the caller creates `.holon/tasks/<id>/`,
  writes the output read so far to `output.log`, writes the TaskRecord and
  starts a detached supervisor (`python -m holon.tasks.command.supervisor <dir>`, own
  session) that inherits the read ends of the pipes and the stdin write end
  through `pass_fds`. The supervisor keeps appending
  output, serves `stdin.fifo`, and learns the exit status from the wrapper's
  exit file, because after the tick exits the command is no longer its
  parent's child (the wrapper writes the file only once the directory exists;
  an earlier end is seen by the tick itself through `poll()`).

* A tty command does not take this path: it starts under its supervisor, which owns
  a pexpect child from the start (holon.tasks.command.terminal, holon.tasks.command.ptytask).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import holon
from holon.home.layout import Home
from holon.procs import group_members
from holon.sandbox.confine import Confinement
from holon.tasks.command import loginenv
from holon.tasks.store import group_alive, read_marker

WRAPPER = '"$@"; s=$?; { echo $s >"$0"; } 2>/dev/null; exit $s'


class SpawnError(Exception):
    def __init__(self, message: str, details: dict) -> None:
        super().__init__(message)
        self.details = details


@dataclass
class Running:
    """A started command and what has been read from it so far."""

    proc: subprocess.Popen
    exit_file: Path
    started: float
    fds: dict[int, str] = field(default_factory=dict)  # fd -> "stdout" | "stderr"
    stdin_fd: int | None = None
    chunks: list[tuple[str, bytes]] = field(default_factory=list)

    def text(self, stream: str | None = None) -> str:
        data = b"".join(c for s, c in self.chunks if stream is None or s == stream)
        return data.decode("utf-8", errors="replace")


def start(
    cmd: str,
    *,
    workdir: Path,
    shell: str,
    login: bool,
    accepts_input: bool,
    exit_file: Path,
    confinement: Confinement,
) -> Running:
    try:
        if "\x00" in cmd:
            raise SpawnError("the command holds a NUL character", {"field": "cmd"})
        path = check_start(workdir, shell)
    except SpawnError:
        confinement.close()  # refused before any child: release the ruleset fd now
        raise
    argv = confinement.argv_prefix + ["/bin/sh", "-c", WRAPPER, str(exit_file), path, "-c", cmd]
    env = loginenv.environment(path, workdir, confinement) if login else confinement.env
    try:
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            start_new_session=True,
            stdin=subprocess.PIPE if accepts_input else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=confinement.preexec,
        )
    except OSError as exc:
        raise SpawnError(
            f"could not start the command: {exc.strerror or exc}", {"errno": exc.errno}
        ) from None
    except subprocess.SubprocessError as exc:  # the sandbox could not be applied in the child
        raise SpawnError(
            f"could not confine the command ({confinement.enforcement}): {exc}",
            {"sandbox": confinement.policy.label},
        ) from None
    finally:
        confinement.close()
    run = Running(proc, exit_file, time.monotonic())
    run.fds = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    run.stdin_fd = proc.stdin.fileno() if proc.stdin else None
    return run


def check_start(workdir: Path, shell: str) -> str:
    """The shell's path, or SpawnError when the workdir or the shell cannot be used."""
    for name, value in (("workdir", os.fspath(workdir)), ("shell", shell)):
        if "\x00" in value:  # the OS cannot take it: say so instead of a ValueError
            raise SpawnError(f"the {name} holds a NUL character", {"field": name})
    if not os.path.isdir(workdir):
        raise SpawnError(
            f"workdir {workdir} does not exist or is not a directory", {"workdir": str(workdir)}
        )
    path = shell_path(shell)
    if not path:
        raise SpawnError(f"shell {shell!r} was not found or is not executable", {"shell": shell})
    return path


def shell_path(shell: str) -> str | None:
    path = shell if os.sep in shell else _which(shell)
    return path if path and os.access(path, os.X_OK) else None


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def collect(run: Running, deadline: float, limit_bytes: int | None = None) -> bool:
    """Read output until the command ends (True) or `deadline` passes (False)."""
    sel = selectors.DefaultSelector()
    for fd in run.fds:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    open_fds = set(run.fds)
    try:
        while open_fds:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                return run.proc.poll() is not None and _drain(run, open_fds)
            for key, _ in sel.select(timeout):
                fd = key.fd
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(fd)
                    open_fds.discard(fd)
                    continue
                run.chunks.append((run.fds[fd], data))
            if not open_fds:
                break
        # pipes closed; the command is ending (or left background children holding nothing)
        remaining = deadline - time.monotonic()
        try:
            run.proc.wait(timeout=max(0.0, remaining))
        except subprocess.TimeoutExpired:
            return False
        return True
    finally:
        sel.close()


def _drain(run: Running, open_fds: set[int]) -> bool:
    """The process ended right at the deadline: take what is left in the pipes without blocking."""
    for fd in list(open_fds):
        while True:
            try:
                data = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not data:
                break
            run.chunks.append((run.fds[fd], data))
    return True


def close(run: Running) -> None:
    for fd in list(run.fds) + ([run.stdin_fd] if run.stdin_fd is not None else []):
        try:
            os.close(fd)
        except OSError:
            pass
    run.fds = {}
    run.stdin_fd = None
    for stream in (run.proc.stdin, run.proc.stdout, run.proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def kill_group(pgid: int, grace: float = 2.0) -> str:
    """Stop a whole process group: TERM, wait up to `grace` seconds, then KILL. A pgid of 0 or 1
    (a record without a pid yet) names no task's group: nothing is signalled."""
    if pgid <= 1:
        return "gone"
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return "gone"
    end = time.monotonic() + grace
    while time.monotonic() < end:
        if not group_alive(pgid) or _only_zombies(pgid):
            return "terminated"
        time.sleep(0.02)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return "terminated"
    return "killed"


def _only_zombies(pgid: int) -> bool:
    """True when every process left in the group is a zombie (the group leader may wait to be
    reaped)."""
    return not group_members(pgid)


def start_supervisor(home: Home, task_id: str, run: Running) -> int:
    """Hand the running command to a detached supervisor; returns the supervisor pid."""
    fds = list(run.fds) + ([run.stdin_fd] if run.stdin_fd is not None else [])
    for fd in fds:
        os.set_inheritable(fd, True)
    spec = ",".join(f"{name}:{fd}" for fd, name in run.fds.items())
    if run.stdin_fd is not None:
        spec += f",stdin:{run.stdin_fd}"
    return launch_supervisor(home, task_id, spec, fds)


def supervisor_env(home: Home) -> dict[str, str]:
    """The supervisor's environment: this process's without provider keys or anything else that
    looks like a credential (it needs none; the policy's pass_env stays, for a tty command)."""
    from holon.errors import HolonError
    from holon.sandbox import policy

    try:
        chosen = policy.read(home)
    except HolonError:  # an invalid policy refuses the command itself; pass nothing on
        chosen = policy.Policy()
    return policy.scrub(dict(os.environ), chosen)


def launch_supervisor(home: Home, task_id: str, spec: str, fds: list[int]) -> int:
    """Start `python -m holon.tasks.command.supervisor` for the task, detached in its own
    session; it forks the real supervisor and exits once the active marker names it (no zombie
    here). Returns the supervisor pid (0 when it ended before it could write the marker)."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(holon.__file__)))
    pythonpath = os.pathsep.join(p for p in (pkg_parent, os.environ.get("PYTHONPATH")) if p)
    env = {**supervisor_env(home), "PYTHONPATH": pythonpath}
    with open(
        home.task_dir(task_id) / "supervisor.log", "ab"
    ) as log:  # the supervisor's own diagnostics
        sup = subprocess.Popen(
            [sys.executable, "-m", "holon.tasks.command.supervisor", str(home.root), task_id, spec],
            pass_fds=fds,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
            close_fds=True,
        )
    sup.wait()
    return read_marker(home, task_id)

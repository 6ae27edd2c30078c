"""Start a command directly, collect its output until it ends or its yield
expires, then hand it off.

Design (measured against the ExecCommand-of-`true` benchmark):

* Fast path. The command is started directly by the calling process (the
  tick) with `Popen(start_new_session=True)` — its own session and process
  group, `HOLON_AGENT_ID` / `HOLON_AGENT_HOME` in its environment — under a
  tiny wrapper shell: `/bin/sh -c '"$@"; s=$?; { echo $s >"$0"; } 2>/dev/null;
  exit $s' <exit-file> <shell> [-l] -c <cmd>`. Output is read from pipes (or a
  pty master for `tty`) with a selector until the command ends or
  `yield_time_ms` passes. A command that ends in time never touches the task
  store: no directory, no supervisor, no extra Python process.

* Promotion. At the yield deadline the caller creates `.holon/tasks/<id>/`,
  writes the output read so far to `output.log`, writes the TaskRecord and
  starts a detached supervisor (`python -m holon.tasks.supervisor <dir>`, own
  session) that inherits the read ends of the pipes (or the pty master) and
  the stdin write end through `pass_fds`. The supervisor keeps appending
  output, serves `stdin.fifo`, and learns the exit status from the wrapper's
  exit file, because after the tick exits the command is no longer its
  parent's child (the wrapper writes the file only once the directory exists;
  an earlier end is seen by the tick itself through `poll()`).

* tty uses the stdlib `pty` rather than pexpect: a pexpect child cannot be
  waited on from another process, while a pty master fd can be handed over
  like a pipe. The wrapper reopens the pty slave by name, so the command gets
  it as its controlling terminal (the session was created by setsid).
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
from holon.tasks.store import group_alive, read_marker

WRAPPER = '"$@"; s=$?; { echo $s >"$0"; } 2>/dev/null; exit $s'
TTY_WRAPPER = 'exec 0<>"$HOLON_TTY" 1>&0 2>&0; unset HOLON_TTY; ' + WRAPPER


class SpawnError(Exception):
    def __init__(self, message: str, details: dict) -> None:
        super().__init__(message)
        self.details = details


@dataclass
class Running:
    """A started command and what has been read from it so far."""

    proc: subprocess.Popen
    exit_file: Path
    tty: bool
    started: float
    fds: dict[int, str] = field(default_factory=dict)  # fd -> "stdout" | "stderr" | "tty"
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
    tty: bool,
    accepts_input: bool,
    exit_file: Path,
    confinement: Confinement,
) -> Running:
    shell_path = _shell_path(shell)
    if not os.path.isdir(workdir) or not shell_path:
        confinement.close()  # refused before any child: release the ruleset fd now
        if not os.path.isdir(workdir):
            raise SpawnError(
                f"workdir {workdir} does not exist or is not a directory",
                {"workdir": str(workdir)},
            )
        raise SpawnError(f"shell {shell!r} was not found or is not executable", {"shell": shell})
    argv = ["/bin/sh", "-c", TTY_WRAPPER if tty else WRAPPER, str(exit_file), shell_path]
    argv += ["-l", "-c", cmd] if login else ["-c", cmd]
    argv = confinement.argv_prefix + argv
    try:
        if tty:
            return _start_tty(argv, workdir, confinement, exit_file)
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=confinement.env,
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
    run = Running(proc, exit_file, False, time.monotonic())
    run.fds = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    run.stdin_fd = proc.stdin.fileno() if proc.stdin else None
    return run


def _start_tty(
    argv: list[str], workdir: Path, confinement: Confinement, exit_file: Path
) -> Running:
    import pty

    master, slave = pty.openpty()
    env = {**confinement.env, "HOLON_TTY": os.ttyname(slave)}
    try:
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            start_new_session=True,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=confinement.preexec,
        )
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    run = Running(proc, exit_file, True, time.monotonic())
    run.fds = {master: "tty"}
    run.stdin_fd = master
    return run


def _shell_path(shell: str) -> str | None:
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
                except OSError:  # EIO: the pty slave is closed everywhere
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
    """Stop a whole process group: TERM, wait up to `grace` seconds, then KILL."""
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
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(holon.__file__)))
    pythonpath = os.pathsep.join(p for p in (pkg_parent, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath}
    with open(
        home.task_dir(task_id) / "supervisor.log", "ab"
    ) as log:  # the supervisor's own diagnostics
        sup = subprocess.Popen(
            [sys.executable, "-m", "holon.tasks.supervisor", str(home.root), task_id, spec],
            pass_fds=fds,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
            close_fds=True,
        )
    # it forks the real supervisor and exits once the active marker names it (no zombie here)
    sup.wait()
    return read_marker(home, task_id)

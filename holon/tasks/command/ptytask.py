"""The supervisor side of a tty command: a pexpect child owned from its start.

`python -m holon.tasks.command.supervisor <home> <task_id> tty` lands here (after the
supervisor has detached). It confines and spawns the command under a
pseudo-terminal with pexpect, records its pid, appends everything the terminal
shows to `output.log` (one combined transcript), types what TaskInput writes
to `stdin.fifo` (an end of file is pexpect's sendeof; control characters reach
the terminal's line discipline as typed, so Ctrl-C interrupts), and when the command ends
hands the outcome over as holon.tasks.command.handoff describes.

The terminal is `TERM=dumb` unless the command's environment names another, so
programs print plain text, and its window is ROWS x COLS.
"""

from __future__ import annotations

import os
import selectors
import time
from pathlib import Path
from typing import Any

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tasks import store
from holon.tasks.command import handoff, inputchan, loginenv

ROWS, COLS = 24, 160
POLL_S = 0.1
LINGER_S = 0.5  # after the command ended, how long background children may keep output open


def _spawn_class() -> Any:
    import pexpect

    class Spawn(pexpect.spawn):
        """pexpect.spawn that keeps the sandbox ruleset fd open in the child until its
        preexec applies it (ptyprocess closes every other fd first)."""

        def __init__(self, *args: Any, pass_fds: tuple[int, ...] = (), **kw: Any) -> None:
            self._pass_fds = pass_fds
            super().__init__(*args, **kw)

        def _spawnpty(self, args: list, **kwargs: Any) -> Any:
            import ptyprocess

            return ptyprocess.PtyProcess.spawn(args, pass_fds=self._pass_fds, **kwargs)

    return Spawn


def spawn(home: Home, record: dict[str, Any]) -> Any:
    """Start the record's command confined, under a pty; raises OSError or ExceptionPexpect."""
    from holon.sandbox import confine
    from holon.tasks.command.spawn import shell_path

    cmd = record["command"]
    workdir = Path(cmd["workdir"])
    confinement = confine.prepare(
        home,
        execution_root=Path(cmd.get("execution_root") or home.root),
        workdir=workdir,
        scratch=home.scratch_dir(record["id"]),
    )
    try:
        shell = shell_path(cmd["shell"]) or cmd["shell"]
        login = cmd.get("login")
        env = loginenv.environment(shell, workdir, confinement) if login else dict(confinement.env)
        env.setdefault("TERM", "dumb")
        argv = [shell, "-c", cmd["cmd"]]
        argv = confinement.argv_prefix + argv
        fds = (confinement.ruleset.fd,) if confinement.ruleset is not None else ()
        return _spawn_class()(
            argv[0],
            argv[1:],
            cwd=str(workdir),
            env=env,
            preexec_fn=confinement.preexec,
            dimensions=(ROWS, COLS),
            echo=True,
            timeout=None,
            pass_fds=fds,
        )
    finally:
        confinement.close()


def supervise(agent: Agent, task_id: str, fifo_fd: int | None) -> None:
    """Run the tty command to its end, then hand the outcome over (see
    holon.tasks.command.handoff)."""
    home = agent.home
    record = store.load(home, task_id) or {}
    try:
        child = spawn(home, record)
    except Exception as exc:  # noqa: BLE001 - reported to the starter, which raises SpawnError
        handoff.write_spawn_error(
            home, task_id, f"could not start the command under a terminal: {exc}", {}
        )
        store.clear_active(home, task_id)
        return
    with handoff.held(home, task_id):
        record = store.load(home, task_id) or record
        record["pid"] = child.pid
        record["supervisor_pid"] = os.getpid()
        store.save(home, record)
    _pump(home, task_id, child, fifo_fd)
    exit_status, signal = _close(child)
    with handoff.held(home, task_id):
        handoff.write_ended(home, task_id, exit_status, signal)
        record = store.load(home, task_id) or record
        mine = record.get("promoted") or not handoff.starter_alive(record)
        if mine and not record.get("promoted"):
            record["promoted"] = True  # the starter died before its deadline: report as a task
            store.save(home, record)
    if not mine:  # the starter reports it inline and removes the task directory
        store.clear_active(home, task_id)
        return
    _finish(agent, task_id, record, exit_status, signal)


def _pump(home: Home, task_id: str, child: Any, fifo_fd: int | None) -> None:
    tdir = home.task_dir(task_id)
    out = os.open(tdir / "output.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    sel = selectors.DefaultSelector()
    sel.register(child.child_fd, selectors.EVENT_READ, "out")
    if fifo_fd is not None:
        sel.register(fifo_fd, selectors.EVENT_READ, "fifo")
    ended_at = None
    reading = True
    decoder = inputchan.Decoder()
    try:
        while True:
            for key, _ in sel.select(POLL_S):
                if key.data == "fifo":
                    _type(child, key.fd, decoder)
                    continue
                data = _read(child)
                if data:
                    _write_all(out, data)
                elif data is not None:
                    sel.unregister(key.fd)
                    reading = False
            if ended_at is None and not child.isalive():
                ended_at = time.monotonic()
            if ended_at is not None and (not reading or time.monotonic() - ended_at > LINGER_S):
                return
    finally:
        sel.close()
        os.close(out)
        if fifo_fd is not None:
            os.close(fifo_fd)


def _read(child: Any) -> bytes | None:
    """What the terminal shows now: bytes, None when nothing yet, b"" once it is closed."""
    import pexpect

    try:
        return child.read_nonblocking(65536, timeout=0)
    except pexpect.TIMEOUT:
        return None
    except pexpect.EOF:
        return b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _type(child: Any, fifo_fd: int, decoder: inputchan.Decoder) -> None:
    try:
        data = os.read(fifo_fd, 65536)
    except BlockingIOError:
        return
    try:
        for kind, payload in decoder.feed(data):
            if kind == "eof":
                child.sendeof()
            elif payload:
                child.send(payload)
    except OSError:  # the terminal is gone: the command ended
        pass


def _close(child: Any) -> tuple[int | None, int | None]:
    """Close the terminal of a command that has ended (no need to wait for it to die)."""
    child.ptyproc.delayafterclose = 0.0
    try:
        child.close(force=True)
    except Exception:  # noqa: BLE001 - a child that will not die was killed; its status stays
        pass
    return child.exitstatus, child.signalstatus


def _finish(
    agent: Agent, task_id: str, record: dict[str, Any], exit_status: int | None, sig: int | None
) -> None:
    from holon.tasks import results

    results.conclude(agent, store.load(agent.home, task_id) or record, exit_status, signal=sig)

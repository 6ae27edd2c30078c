"""The detached per-task supervisor:
`python -m holon.tasks.command.supervisor <home> <task_id> <fd-spec>`.

Started by ExecCommand when a command outlives its yield (see holon.tasks.command.spawn), or with
`tty` in place of the fd spec when a tty command starts (holon.tasks.command.ptytask owns it from
the start).
It inherits the command's output pipes and its stdin fd, appends output to
`output.log`, forwards what TaskInput writes to `stdin.fifo` (framed, see
holon.tasks.command.inputchan), learns the exit status from the wrapper's
`exit_status` file (or notices the wrapper died without one), then writes the
terminal TaskRecord, admits the task_result message and removes the
`active/<task_id>` marker.
"""

from __future__ import annotations

import os
import selectors
import sys
import time
from pathlib import Path

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.procguard import undumpable
from holon.procs import alive
from holon.tasks import store
from holon.tasks.command import inputchan

POLL_S = 0.1
LINGER_S = 0.5  # after the command ended, how long background children may keep output open


def parse_spec(spec: str) -> tuple[dict[int, str], int | None]:
    outputs: dict[int, str] = {}
    stdin_fd = None
    for part in filter(None, spec.split(",")):
        name, fd = part.split(":")
        if name == "stdin":
            stdin_fd = int(fd)
        else:
            outputs[int(fd)] = name
    return outputs, stdin_fd


def supervise(
    agent: Agent, task_id: str, outputs: dict[int, str], stdin_fd: int | None, fifo_fd: int | None
) -> None:
    home = agent.home
    tdir = home.task_dir(task_id)
    record = store.load(home, task_id) or {}
    record["supervisor_pid"] = os.getpid()
    store.save(home, record)
    pid = int(record["pid"])
    sel = selectors.DefaultSelector()
    for fd in outputs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, "out")
    if fifo_fd is not None:
        sel.register(fifo_fd, selectors.EVENT_READ, "fifo")
    decoder = inputchan.Decoder()
    out = os.open(tdir / "output.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    ended_at = None
    open_outputs = set(outputs)
    while True:
        for key, _ in sel.select(POLL_S):
            if key.data == "fifo":
                stdin_fd = _forward(key.fd, stdin_fd, decoder)
                continue
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                os.write(out, data)
            else:
                sel.unregister(key.fd)
                open_outputs.discard(key.fd)
        exit_status = store.read_exit_status(home, task_id)
        ended = exit_status is not None or not alive(pid)
        if ended and ended_at is None:
            ended_at = time.monotonic()
        if ended and (not open_outputs or time.monotonic() - ended_at > LINGER_S):
            break
    os.close(out)
    if fifo_fd is not None:
        os.close(fifo_fd)
    _finish(agent, store.load(home, task_id) or record)


def _open_fifo(tdir: Path) -> int:
    path = tdir / "stdin.fifo"
    if not path.exists():
        os.mkfifo(path, 0o600)
    return os.open(path, os.O_RDWR | os.O_NONBLOCK)  # RDWR: a closing writer is not EOF


def _forward(fifo_fd: int, stdin_fd: int | None, decoder: inputchan.Decoder) -> int | None:
    """Write the frames TaskInput sent to the command's stdin; an end of file (or a payload of
    Ctrl-D only) closes it. Returns the stdin fd, None once closed."""
    try:
        data = os.read(fifo_fd, 65536)
    except BlockingIOError:
        return stdin_fd
    for kind, payload in decoder.feed(data):
        if stdin_fd is None:
            break
        if kind == "eof" or (payload and payload == b"\x04" * len(payload)):
            os.close(stdin_fd)
            stdin_fd = None
            continue
        view = memoryview(payload)
        while view:
            try:
                view = view[os.write(stdin_fd, view) :]
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:  # the command closed its stdin
                break
    return stdin_fd


def _finish(agent: Agent, record: dict) -> None:
    # admission and pydantic: loaded only when the task ends, so the supervisor starts fast
    from holon.tasks import results

    exit_status = store.read_exit_status(agent.home, record["id"])
    killed = {
        "kind": "command_killed",
        "message": "the command's wrapper shell ended without recording an exit "
        "status (killed by a signal)",
        "task_id": record["id"],
        "pid": record.get("pid"),
    }
    results.conclude(
        agent, record, exit_status, failure=None if exit_status is not None else killed
    )


def main(argv: list[str]) -> int:
    undumpable()  # it reads the admission key to admit the result: not for the command to read
    agent, task_id = Agent(Home(argv[0])), argv[1]  # the supervisor's own process: one handle
    home = agent.home
    spec = argv[2] if len(argv) > 2 else ""
    if spec == "tty":  # the command starts here, under pexpect (holon.tasks.command.ptytask)
        return _main_tty(agent, task_id)
    outputs, stdin_fd = parse_spec(spec)
    record = store.load(home, task_id) or {}
    accepts = stdin_fd is not None and (record.get("command") or {}).get("accepts_input")
    # the input channel exists before the starter returns, so TaskInput right after promotion works
    fifo_fd = _open_fifo(home.task_dir(task_id)) if accepts else None
    child = os.fork()  # detach: the starter waits for this process, never for the supervisor
    if child:
        store.set_active(home, task_id, child)
        os._exit(0)
    supervise(agent, task_id, outputs, stdin_fd, fifo_fd)
    return 0


def _main_tty(agent: Agent, task_id: str) -> int:
    home = agent.home
    fifo_fd = _open_fifo(home.task_dir(task_id))  # a terminal always takes input
    child = os.fork()
    if child:
        store.set_active(home, task_id, child)
        os._exit(0)
    from holon.tasks.command import ptytask

    ptytask.supervise(agent, task_id, fifo_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

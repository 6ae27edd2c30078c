"""The detached per-task supervisor: `python -m holon.tasks.supervisor <home> <task_id> <fd-spec>`.

Started by ExecCommand when a command outlives its yield (see holon.tasks.spawn).
It inherits the command's output fds (pipes or the pty master) and its stdin
fd, appends output to `output.log`, forwards bytes written to `stdin.fifo`,
learns the exit status from the wrapper's `exit_status` file (or notices the
wrapper died without one), then writes the terminal TaskRecord, admits the
task_result message and removes the `active/<task_id>` marker.
"""

from __future__ import annotations

import os
import selectors
import sys
import time
from pathlib import Path

from holon.home.layout import Home
from holon.procs import alive
from holon.tasks import store

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
    home: Home, task_id: str, outputs: dict[int, str], stdin_fd: int | None, fifo_fd: int | None
) -> None:
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
    out = os.open(tdir / "output.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    ended_at = None
    open_outputs = set(outputs)
    while True:
        for key, _ in sel.select(POLL_S):
            if key.data == "fifo":
                _forward(key.fd, stdin_fd)
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
    _finish(home, tdir, store.load(home, task_id) or record)


def _open_fifo(tdir: Path) -> int:
    path = tdir / "stdin.fifo"
    if not path.exists():
        os.mkfifo(path, 0o600)
    return os.open(path, os.O_RDWR | os.O_NONBLOCK)  # RDWR: a closing writer is not EOF


def _forward(fifo_fd: int, stdin_fd: int | None) -> None:
    try:
        data = os.read(fifo_fd, 65536)
    except BlockingIOError:
        return
    if data == b"\x04" * len(data) and stdin_fd is not None and not os.isatty(stdin_fd):
        os.close(stdin_fd)  # TaskInput eof on a pipe: close the command's stdin
        return
    view = memoryview(data)
    while view and stdin_fd is not None:
        try:
            view = view[os.write(stdin_fd, view) :]
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            return


def _finish(home: Home, tdir: Path, record: dict) -> None:
    # admission and pydantic: loaded only when the task ends, so the supervisor starts fast
    from holon.tasks import results

    exit_status = store.read_exit_status(home, record["id"])
    if (tdir / "stop_requested").exists():
        record["stop_requested"] = True
        results.finish(home, record, "cancelled", exit_status=exit_status)
    elif exit_status is not None:
        results.finish(
            home, record, "completed" if exit_status == 0 else "failed", exit_status=exit_status
        )
    else:
        results.finish(
            home,
            record,
            "failed",
            failure={
                "kind": "command_killed",
                "message": "the command's wrapper shell ended without recording an exit "
                "status (killed by a signal)",
                "task_id": record["id"],
                "pid": record.get("pid"),
            },
        )


def main(argv: list[str]) -> int:
    home, task_id = Home(argv[0]), argv[1]
    outputs, stdin_fd = parse_spec(argv[2] if len(argv) > 2 else "")
    record = store.load(home, task_id) or {}
    accepts = stdin_fd is not None and (record.get("command") or {}).get("accepts_input")
    # the input channel exists before the starter returns, so TaskInput right after promotion works
    fifo_fd = _open_fifo(home.task_dir(task_id)) if accepts else None
    child = os.fork()  # detach: the starter waits for this process, never for the supervisor
    if child:
        store.set_active(home, task_id, child)
        os._exit(0)
    supervise(home, task_id, outputs, stdin_fd, fifo_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

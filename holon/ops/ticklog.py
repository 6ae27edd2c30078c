"""`holon tick --log`: each run that has something to report appends one timestamped block to
$HOLON_HOME/logs/tick.log (the file 0600 in a 0700 directory), rotated at 1 MiB to tick.log.1 …
tick.log.3. An idle run writes nothing and opens nothing. Stdlib only: it is on the tick's path.

A plain text log, not a state file: appended under an flock on the file itself, so two ticks
never interleave their blocks or rotate twice.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from holon import clock, paths

MAX_BYTES = 1 << 20
KEEP = 3


def log_path() -> Path:
    return paths.holon_home() / "logs" / "tick.log"


def block(what: str, code: int, lines: list[str]) -> str:
    head = f"== {clock.now_iso()} holon tick {what} (pid {os.getpid()}): exit {code}"
    return "\n".join([head, *lines]) + "\n"


def append(path: Path, text: str, *, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> None:
    """Append `text` to `path` in one locked write; rotate first when it would pass max_bytes."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = text.encode("utf-8", "backslashreplace")
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            mine = os.fstat(fd)
            try:
                rotated = not os.path.samestat(mine, os.stat(path))
            except FileNotFoundError:
                rotated = True
            if rotated:  # another tick rotated it while this one waited for the lock
                continue
            if mine.st_size and mine.st_size + len(data) > max_bytes:
                _rotate(path, keep)
                continue
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            return
        finally:
            os.close(fd)


def _rotate(path: Path, keep: int) -> None:
    """tick.log -> tick.log.1 -> … -> tick.log.<keep>; the oldest is dropped."""
    for n in range(keep - 1, 0, -1):
        try:
            os.replace(f"{path}.{n}", f"{path}.{n + 1}")
        except FileNotFoundError:
            pass
    os.replace(path, f"{path}.1")

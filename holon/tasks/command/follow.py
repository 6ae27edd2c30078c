"""What a task printed after an input: pexpect's expect over the task's output log.

The supervisor appends everything the command prints to `output.log`; TaskInput
notes its size before it writes, then reads on from there through a pexpect
spawn whose "child" is that file. So an agent or an operator gets the answer to
an input in one call, with pexpect's semantics: wait for a pattern (a regular
expression, searched as output arrives), or, without one, until the output has
been quiet for `settle` seconds after something arrived; at most `timeout`
seconds either way. The task ending is pexpect's EOF.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

POLL_S = 0.02
READ_MAX = 65536
LIMIT_BYTES = 4 * 1024 * 1024  # stop following a task that floods its output


def _log_spawn(path: Path, offset: int, ended: Callable[[], bool]) -> Any:
    from pexpect import EOF, TIMEOUT
    from pexpect.spawnbase import SpawnBase

    class LogSpawn(SpawnBase):
        """A pexpect spawn reading a growing file from `offset`; EOF once the task has ended and
        everything it printed has been read."""

        def __init__(self) -> None:
            super().__init__(
                timeout=None, maxread=READ_MAX, encoding="utf-8", codec_errors="replace"
            )
            self.child_fd = os.open(path, os.O_RDONLY)
            os.lseek(self.child_fd, offset, os.SEEK_SET)
            self.closed = False
            self.bytes_read = 0

        def read_nonblocking(self, size: int = 1, timeout: float | None = None) -> str:
            end = time.monotonic() + (timeout if timeout is not None else 1e9)
            while True:
                finished = ended()  # before the read: output is complete once the task ended
                data = os.read(self.child_fd, min(size, READ_MAX))
                if data:
                    self.bytes_read += len(data)
                    if self.bytes_read > LIMIT_BYTES:
                        raise EOF("output limit")
                    return self._decoder.decode(data, final=False)
                if finished:
                    self.flag_eof = True
                    raise EOF("task ended")
                if time.monotonic() >= end:
                    raise TIMEOUT("no output")
                time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))

        def close(self) -> None:
            if not self.closed:
                os.close(self.child_fd)
                self.closed = True

    return LogSpawn()


def after(
    path: Path,
    offset: int,
    ended: Callable[[], bool],
    *,
    expect: str | None,
    timeout: float,
    settle: float,
) -> dict[str, Any]:
    """{output, wait_outcome (matched | settled | timeout | task_ended), matched}."""
    if timeout <= 0:
        return {"output": "", "wait_outcome": "not_waited", "matched": None}
    import pexpect

    spawn = _log_spawn(path, offset, ended)
    try:
        if expect is not None:
            with warnings.catch_warnings():  # a FutureWarning about the pattern is not an error
                warnings.simplefilter("ignore")
                pattern = re.compile(expect)
            index = spawn.expect([pattern, pexpect.EOF, pexpect.TIMEOUT], timeout)
            matched = spawn.after if index == 0 else None
            text = spawn.before + (matched or "")
            outcome = ("matched", "task_ended", "timeout")[index]
            return {"output": _plain(text), "wait_outcome": outcome, "matched": _plain(matched)}
        return _settle(spawn, timeout, settle)
    finally:
        spawn.close()


def _settle(spawn: Any, timeout: float, settle: float) -> dict[str, Any]:
    import pexpect

    parts: list[str] = []
    end = time.monotonic() + timeout
    outcome = "timeout"
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        wait = min(settle, left) if parts else left
        try:
            parts.append(spawn.read_nonblocking(READ_MAX, wait))
        except pexpect.TIMEOUT:
            if parts and wait == settle:
                outcome = "settled"
            break
        except pexpect.EOF:
            outcome = "task_ended"
            break
    return {"output": _plain("".join(parts)), "wait_outcome": outcome, "matched": None}


def _plain(text: str | None) -> str | None:
    """A terminal ends lines with CR LF; the transcript for a reader uses LF."""
    return None if text is None else text.replace("\r\n", "\n")

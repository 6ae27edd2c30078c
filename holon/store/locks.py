"""Advisory file locks (flock): the non-blocking turn lock and short state-lock sections.

flock is used directly rather than through a library: it is one syscall, the
lock dies with the process that held it (no stale lock files to clean up), and
it costs nothing to import on the idle path.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


class LockBusy(Exception):
    """The lock is held by another process."""


class FileLock:
    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.fd: int | None = None

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if blocking and timeout is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                deadline = time.monotonic() + (timeout or 0.0)
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if not blocking or time.monotonic() >= deadline:
                            raise LockBusy(self.path) from None
                        time.sleep(0.01)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def is_held_elsewhere(self) -> bool:
        """True when another process holds the lock (probe without keeping it)."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextmanager
def locked(path: str | os.PathLike, timeout: float = 30.0) -> Iterator[None]:
    """A short critical section under `path` (blocking, bounded)."""
    lock = FileLock(path)
    lock.acquire(blocking=True, timeout=timeout)
    try:
        yield
    finally:
        lock.release()

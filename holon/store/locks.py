"""Advisory file locks (flock, through filelock): the turn lock and short state-lock sections.

`filelock` is the project's lock library. On Unix its FileLock is flock(2) on a file that is
left in place, so a lock dies with the process that held it and leaves nothing stale to clean
up. This module keeps holon's small API over it: `LockBusy` (filelock's `Timeout`), one
attempt, a bounded wait or an unbounded one, lock files private to their owner (0600), and no
re-entrancy (callers such as `Agent.state_lock` count their own depth). filelock is imported
inside the functions that lock, never at import: this module is reached on paths that must stay
light (an idle `holon tick` takes no lock), and filelock costs 20-70 ms to import.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import BaseFileLock

MODE = 0o600  # lock files are private to their owner (set when filelock creates one)
POLL = 0.01  # seconds between attempts while waiting: filelock polls a non-blocking flock


class LockBusy(Exception):
    """The lock is held by another process (or another FileLock in this one)."""


class FileLock:
    """One exclusive, non-re-entrant hold on `path`; its directory must exist.

    Two FileLock objects on one path conflict even inside one process, as two processes do.
    One exception: an unbounded wait (blocking, timeout=None) on a path that another FileLock of
    the same thread holds could never end, and filelock refuses it with RuntimeError instead of
    hanging; a bounded wait ends in LockBusy, as for another process. Acquiring a FileLock that
    is already held is a RuntimeError too, and `release` always releases fully. A FileLock
    dropped while held is released by filelock's finalizer.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self._lock: BaseFileLock | None = None  # built on first use, in this process
        self._pid = 0

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._lock is not None and self._pid == os.getpid() and self._lock.is_locked

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> None:
        """Take the lock: one attempt (blocking=False), wait forever (timeout=None) or at most
        `timeout` seconds; LockBusy when another holder keeps it."""
        from filelock import Timeout

        if self.held:
            raise RuntimeError(f"{self.path} is already held by this FileLock (not re-entrant)")
        wait = -1.0 if timeout is None else max(timeout, 0.0)  # filelock: negative = forever
        _require_directory(self.path)
        try:
            self._filelock().acquire(timeout=wait, blocking=blocking)
        except Timeout:
            raise LockBusy(self.path) from None

    def release(self) -> None:
        """Release the lock; harmless when it is not held."""
        if self.held:
            assert self._lock is not None
            self._lock.release(force=True)

    def is_held_elsewhere(self) -> bool:
        """True when another holder has the lock: one attempt, not kept; a missing lock file is
        free and is not created."""
        from filelock import Timeout

        if not os.path.exists(self.path):
            return False
        probe = _new_filelock(self.path)
        try:
            probe.acquire(blocking=False)
        except Timeout:
            return True
        probe.release(force=True)
        return False

    def _filelock(self) -> BaseFileLock:
        # filelock never lets a lock cross a fork, so a child builds its own.
        if self._lock is None or self._pid != os.getpid():
            self._lock, self._pid = _new_filelock(self.path), os.getpid()
        return self._lock

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _require_directory(path: str) -> None:
    """filelock creates missing directories; a lock here never does (a deleted home stays
    deleted): FileNotFoundError, as opening the lock file would give."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise FileNotFoundError(errno.ENOENT, "no directory for the lock file", path)


def _new_filelock(path: str) -> BaseFileLock:
    """A plain filelock.FileLock on `path`: flock only (a filesystem without it is an error, not
    a silent fall back to a lock file that outlives a crash), and no state shared between
    instances."""
    import filelock

    return filelock.FileLock(
        path,
        mode=MODE,
        thread_local=False,
        is_singleton=False,
        fallback_to_soft=False,
        poll_interval=POLL,
    )


@contextmanager
def locked(path: str | os.PathLike, timeout: float = 30.0) -> Iterator[None]:
    """A short critical section under `path` (blocking, bounded)."""
    lock = FileLock(path)
    lock.acquire(blocking=True, timeout=timeout)
    try:
        yield
    finally:
        lock.release()

"""Advisory file locks (flock(2)): the turn lock and short state-lock sections.

A lock is flock(2) on a file that is left in place, so it dies with the process that held it and
leaves nothing stale to clean up. The API: `LockBusy`, one attempt, a bounded wait or an
unbounded one, lock files private to their owner (0600), and no re-entrancy (callers such as
`Agent.state_lock` count their own depth).

Stdlib only, with no import beyond `fcntl`: every admission (`holon enqueue`, `prompt --no-wait`)
takes the state lock, and the `filelock` library this replaced cost 17 ms of import per process
(a fifth of an enqueue) for the one call holon used, with each of its other features turned off.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from _thread import get_ident
from collections.abc import Iterator
from contextlib import contextmanager

MODE = 0o600  # lock files are private to their owner
POLL = 0.01  # seconds between attempts during a bounded wait
_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW

# (st_dev, st_ino) of each lock file a FileLock of this process holds -> the holding thread
_HOLDERS: dict[tuple[int, int], int] = {}


class LockBusy(Exception):
    """The lock is held by another process (or another FileLock in this one)."""


class FileLock:
    """One exclusive, non-re-entrant hold on `path`; its directory must exist.

    Two FileLock objects on one path conflict even inside one process, as two processes do (each
    opens its own file description). One exception: an unbounded wait (blocking, timeout=None) on
    a file that another FileLock of the same thread holds could never end, so it is refused with
    RuntimeError instead of hanging; a bounded wait ends in LockBusy, as for another process.
    Acquiring a FileLock that is already held is a RuntimeError too, and `release` always
    releases fully. A FileLock dropped while held releases the lock (its descriptor closes); a
    forked child never holds or releases its parent's lock.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self._fd: int | None = None
        self._pid = 0
        self._key: tuple[int, int] | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None and self._pid == os.getpid()

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> None:
        """Take the lock: one attempt (blocking=False), wait forever (timeout=None) or at most
        `timeout` seconds; LockBusy when another holder keeps it."""
        if self.held:
            raise RuntimeError(f"{self.path} is already held by this FileLock (not re-entrant)")
        self._fd = None  # a descriptor inherited across a fork is the parent's, never released here
        _require_directory(self.path)
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        while True:
            fd = os.open(self.path, _FLAGS, MODE)
            try:
                st = os.fstat(fd)
                key = (st.st_dev, st.st_ino)
                if not _take(fd, key, self.path, blocking=blocking, deadline=deadline):
                    raise LockBusy(self.path)
                if os.fstat(fd).st_nlink == 0:  # unlinked while we waited: lock the new file
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    continue
                if st.st_mode & 0o777 != MODE and st.st_uid == os.geteuid():
                    os.fchmod(fd, MODE)
            except BaseException:
                os.close(fd)
                raise
            self._fd, self._pid, self._key = fd, os.getpid(), key
            _HOLDERS[key] = get_ident()
            return

    def release(self) -> None:
        """Release the lock; harmless when it is not held."""
        if not self.held:
            return
        fd, self._fd = self._fd, None
        if self._key is not None:
            _HOLDERS.pop(self._key, None)
        if fd is not None:
            os.close(fd)  # closing our only descriptor releases the flock

    def is_held_elsewhere(self) -> bool:
        """True when another holder has the lock: one attempt, not kept; a missing lock file is
        free and is not created."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
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

    def __del__(self) -> None:
        if self.held:
            self.release()


def _take(
    fd: int, key: tuple[int, int], path: str, *, blocking: bool, deadline: float | None
) -> bool:
    """flock `fd`: once, until `deadline` (monotonic seconds), or without end; False when busy."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        if not blocking:
            return False
    if deadline is None:
        if _HOLDERS.get(key) == get_ident():
            raise RuntimeError(
                f"deadlock: {path} is held by another FileLock of this thread, and an unbounded "
                "wait for it would never end"
            )
        fcntl.flock(fd, fcntl.LOCK_EX)  # the kernel wakes us at the release
        return True
    while time.monotonic() < deadline:
        time.sleep(min(POLL, max(deadline - time.monotonic(), 0.0)))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
    return False


def _require_directory(path: str) -> None:
    """A lock never creates its directory (a deleted home stays deleted): FileNotFoundError, as
    opening the lock file would give."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise FileNotFoundError(errno.ENOENT, "no directory for the lock file", path)


@contextmanager
def locked(path: str | os.PathLike, timeout: float = 30.0) -> Iterator[None]:
    """A short critical section under `path` (blocking, bounded)."""
    lock = FileLock(path)
    lock.acquire(blocking=True, timeout=timeout)
    try:
        yield
    finally:
        lock.release()

"""Serialise ApplyPatch writers: flock(2) on every directory a patch reads or writes in.

Two agents (or two `holon tool call`s) patching one file must not both read the old text and
each replace it with their own edit: the second would silently undo the first. Every
transaction therefore holds an exclusive flock on the directory of each file it touches (the
nearest existing ancestor for a file in a directory still to be made) from its read to its last
rename. The directories are locked in one order, by (device, inode), so two transactions over
overlapping sets cannot deadlock, and a lock dies with its process, so a crash leaves nothing
stale. Writers that are not holon (an editor, a command) take no lock: the transaction re-checks
its files just before replacing them instead (transaction.verify).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from holon.patch.errors import patch_error

TIMEOUT = 60.0  # seconds to wait for another transaction on the same directories
_POLL_MAX = 0.05

Key = tuple[int, int]  # a directory's (st_dev, st_ino)


def lock_dir(path: Path) -> Path:
    """The directory to lock for a file at `path`: its parent, or the nearest existing
    ancestor when the parent is still to be made."""
    directory = path.parent
    while not directory.is_dir() and directory != directory.parent:
        directory = directory.parent
    return directory


def keys(dirs: Iterable[Path]) -> set[Key]:
    """The identities of the directories that exist among `dirs`."""
    found = set()
    for d in dirs:
        try:
            st = os.stat(d)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


@contextmanager
def held(dirs: Iterable[Path], timeout: float | None = None) -> Iterator[set[Key]]:
    """Hold an exclusive flock on each existing directory of `dirs`; yields their identities.
    Waits up to `timeout` seconds (TIMEOUT by default) for other holders, then `file_busy`."""
    fds: dict[Key, int] = {}
    try:
        for d in dirs:
            try:
                fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue  # gone or unreadable: the plan reports what is wrong with it
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) in fds:
                os.close(fd)
            else:
                fds[(st.st_dev, st.st_ino)] = fd
        deadline = time.monotonic() + (TIMEOUT if timeout is None else timeout)
        for key in sorted(fds):
            _flock(fds[key], deadline)
        yield set(fds)
    finally:
        for fd in fds.values():
            os.close(fd)  # closing the last descriptor releases its flock


def _flock(fd: int, deadline: float) -> None:
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError:
            return  # a filesystem without flock (some network mounts): re-checks still guard
        if time.monotonic() >= deadline:
            raise patch_error(
                "file_busy",
                "another ApplyPatch kept these files locked for too long; nothing was changed",
            )
        time.sleep(delay)
        delay = min(delay * 2, _POLL_MAX)

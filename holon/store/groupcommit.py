"""Group commit: the ledger appends of a stretch of work made durable together, one fsync per file.

Inside `group()` (a turn: holon.runtime.turn.loop) an append that asks to be durable writes its
line at once, as always, and leaves its fsync to the next `barrier()`, which fsyncs each file
appended to since the last barrier once. A killed process loses nothing by this (the bytes are in
the page cache); what a power loss could take is bounded by the barriers, each placed before what
must not outlive the records it depends on (log, then change):

1. every durable atomic write (holon.store.atomic: a state file never points past ledger bytes
   that are not yet durable) and every queue move;
2. a tool call's effect (its intent, and everything logged before it, first);
3. a ledger's rotation into a segment (the deferred bytes go with the file being renamed);
4. the end of the group.

While `suspended()` (a tool running), appends are fsynced one by one, as outside a group.
Per thread: a group belongs to the thread that opened it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from holon.store import crashpoint


class _Local(threading.local):
    depth = 0  # open groups
    suspended = 0  # open suspensions (a tool call inside a group)

    def __init__(self) -> None:
        # path -> its size before the first deferred append (what a power loss leaves)
        self.pending: dict[str, int] = {}


_local = _Local()


def deferring() -> bool:
    """Is a durable append now to leave its fsync to the next barrier?"""
    return _local.depth > 0 and not _local.suspended


def defer(path: str | os.PathLike, durable_size: int) -> None:
    """`path` was appended to past `durable_size` without an fsync: the next barrier syncs it."""
    _local.pending.setdefault(os.fspath(path), durable_size)


def barrier() -> None:
    """fsync each file appended to since the last barrier, once."""
    if not _local.pending:
        return
    crashpoint.step("groupcommit.barrier")
    for path in list(_local.pending):
        sync(path)


def sync(path: str | os.PathLike) -> None:
    """fsync `path` now if it has deferred appends (before it is renamed, say)."""
    key = os.fspath(path)
    if key not in _local.pending:
        return
    try:
        fd = os.open(key, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)  # as its appender opens it
    except FileNotFoundError:  # removed since (a repair rewrote it, fsynced, under a new inode)
        del _local.pending[key]
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    del _local.pending[key]


def unsynced() -> dict[str, int]:
    """Each file with deferred appends and its size before them (what a crash test's simulated
    power loss cuts it back to: holon.store.crashpoint)."""
    return dict(_local.pending)


crashpoint.track_unsynced(unsynced)


@contextmanager
def group() -> Iterator[None]:
    """Defer the fsyncs of durable appends to barriers; the last barrier is at the end (on an
    error too, where a barrier that fails leaves the error on its way to say what happened)."""
    _local.depth += 1
    try:
        yield
    except BaseException:
        _local.depth -= 1
        try:
            barrier()
        except OSError:
            pass
        raise
    _local.depth -= 1
    barrier()


@contextmanager
def suspended() -> Iterator[None]:
    """Durable appends fsynced one by one again (a tool call writes as it does outside a turn).
    Whatever was deferred before is made durable first."""
    barrier()
    _local.suspended += 1
    try:
        yield
    finally:
        _local.suspended -= 1

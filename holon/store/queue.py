"""A maildir-style message queue: create in tmp/, link into new/, claim by rename into cur/.

File names sort by priority band, then admission time, so `sorted(new/)` is the
dequeue order. A message stays in cur/ while its turn runs and is deleted only
after the turn's effects are persisted; a crash leaves it in cur/ for the next
tick to redeliver (at-least-once). Messages past the delivery limit move to
dead/.

A deferred message (its provider was unreachable) goes back to new/ as
`<name>@<epoch ms>.json`: it keeps its place in line but is not claimed before
that time, and the idle check reads the time from the name without opening
the file.

Every move (link into new/, claim, release, done, dead letter) first makes the ledger appends a
group commit deferred durable (holon.store.groupcommit): a message's fate never gets ahead of
what was logged about it.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from holon import clock, jsonfile, vocab
from holon.store import crashpoint, groupcommit
from holon.store.atomic import (
    DIR_MODE,
    FILE_MODE,
    dumps,
    fsync_dir,
    private,
    write_all,
    write_bytes,
)

MAX_MESSAGE_BYTES = 64 << 20  # far above any admitted body (runtime.max_message_bytes)
BANDS = {p: band for band, p in enumerate(vocab.PRIORITIES)}  # the file name's first part
NOT_BEFORE = "@"  # <name>@<epoch ms>.json: a deferred message, not claimed before that time


def not_before_of(name: str) -> float | None:
    """The not-before time (epoch seconds) a deferred message's file name carries, else None.
    Stdlib only: the idle check calls it."""
    stem = name[:-5] if name.endswith(".json") else name
    head, sep, ms = stem.rpartition(NOT_BEFORE)
    if not sep or not ms.isdigit():
        return None
    return int(ms) / 1000.0


def base_name(name: str) -> str:
    """The file name without its not-before part (the name it was admitted under)."""
    if not_before_of(name) is None:
        return name
    return name[:-5].rpartition(NOT_BEFORE)[0] + ".json"


def deferred_name(name: str, not_before: float) -> str:
    return f"{base_name(name)[:-5]}{NOT_BEFORE}{math.ceil(not_before * 1000)}.json"


class Queue:
    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.tmp = self.root / "tmp"
        self.new = self.root / "new"
        self.cur = self.root / "cur"
        self.dead = self.root / "dead"

    def ensure(self) -> None:
        for d in (self.root, self.tmp, self.new, self.cur, self.dead):
            d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)

    @staticmethod
    def make_name(priority: str) -> str:
        band = BANDS.get(priority, BANDS[vocab.DEFAULT_PRIORITY])
        return f"{band}-{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"

    def put(self, record: dict, priority: str) -> str:
        """Durably add `record` to new/; returns the file name. Every byte is written and synced
        before the file is linked into new/: a failed write (a full disk) raises and leaves
        nothing in new/, never a truncated message."""
        data = (dumps(record) + "\n").encode("utf-8")
        while True:
            name = self.make_name(priority)
            tmp = self.tmp / name
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private(FILE_MODE))
            except FileExistsError:
                continue
            break
        try:
            try:
                write_all(fd, data, "queue.write")
                os.fsync(fd)
            finally:
                os.close(fd)
            groupcommit.barrier()
            crashpoint.step("queue.link")
            os.link(tmp, self.new / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        crashpoint.step("queue.unlink_tmp")
        os.unlink(tmp)
        fsync_dir(self.new)
        return name

    def pending(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.new) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def has_pending(self) -> bool:
        try:
            with os.scandir(self.new) as it:
                return any(e.name.endswith(".json") for e in it)
        except FileNotFoundError:
            return False

    def in_progress(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.cur) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def deferred(self, now: float | None = None) -> list[tuple[str, float]]:
        """(name, not-before) of the messages in new/ not to be claimed yet, in queue order."""
        now = clock.now_ts() if now is None else now
        out = []
        for name in self.pending():
            at = not_before_of(name)
            if at is not None and at > now:
                out.append((name, at))
        return out

    def next_not_before(self) -> float | None:
        """The earliest not-before of a deferred message in new/ (from the names alone)."""
        times = [t for t in map(not_before_of, self.pending()) if t is not None]
        return min(times) if times else None

    def has_ready(self, now: float | None = None) -> bool:
        """Is there a message in new/ that may be claimed now?"""
        now = clock.now_ts() if now is None else now
        return any((not_before_of(n) or 0.0) <= now for n in self.pending())

    def claim(self, now: float | None = None) -> tuple[str, dict] | None:
        """Move the first message of new/ that may run now into cur/ and return it; None when
        there is none (a deferred message is skipped until its not-before time)."""
        now = clock.now_ts() if now is None else now
        for name in self.pending():
            if (not_before_of(name) or 0.0) > now:
                continue
            groupcommit.barrier()
            crashpoint.step("queue.claim")
            try:
                os.rename(self.new / name, self.cur / name)
            except FileNotFoundError:
                continue  # lost a race: someone else claimed it
            fsync_dir(self.cur)
            record = self._load(self.cur / name)
            if record is None:
                self.quarantine(self.cur / name)
                continue
            return name, record
        return None

    def read_cur(self, name: str) -> dict | None:
        return self._load(self.cur / name)

    def read_new(self, name: str) -> dict | None:
        return self._load(self.new / name)

    def rewrite_cur(self, name: str, record: dict) -> None:
        write_bytes(self.cur / name, (dumps(record) + "\n").encode("utf-8"))

    def release(self, name: str, not_before: float | None = None) -> str:
        """Put a claimed message back into new/ (same base name: same place in line), not to be
        claimed before `not_before` when given; returns its name there."""
        target = base_name(name) if not_before is None else deferred_name(name, not_before)
        groupcommit.barrier()
        crashpoint.step("queue.release")
        os.rename(self.cur / name, self.new / target)
        fsync_dir(self.new)
        return target

    def defer(self, name: str, record: dict, not_before: float) -> str:
        """Rewrite a claimed message (its record carries the deferral), then put it back into new/
        not to be claimed before `not_before`. A crash between the two leaves the rewritten record
        in cur/, which recovery releases with the same not-before."""
        self.rewrite_cur(name, record)
        return self.release(name, not_before)

    def done(self, name: str) -> None:
        groupcommit.barrier()
        crashpoint.step("queue.done")
        try:
            os.unlink(self.cur / name)
        except FileNotFoundError:
            pass
        fsync_dir(self.cur)

    def dead_letter(self, name: str) -> str:
        """Move a claimed message to dead/ (under its base name); returns that name."""
        target = base_name(name)
        groupcommit.barrier()
        crashpoint.step("queue.dead_letter")
        os.rename(self.cur / name, self.dead / target)
        fsync_dir(self.dead)
        return target

    def dead_letters(self) -> list[str]:
        try:
            return sorted(os.listdir(self.dead))
        except FileNotFoundError:
            return []

    def depth(self) -> int:
        return len(self.pending()) + len(self.in_progress())

    def peek_all(self) -> list[dict]:
        out = []
        for name in self.pending():
            rec = self._load(self.new / name)
            if rec is not None:
                out.append(rec)
        return out

    def quarantine(self, path: Path) -> None:
        """Set an unreadable message file aside as dead/<name>.unreadable."""
        try:
            os.rename(path, self.dead / (path.name + ".unreadable"))
        except FileNotFoundError:
            pass

    @staticmethod
    def _load(path: Path) -> dict | None:
        """The record in `path`; None when it is gone or not a message (not a regular file, too
        large, not strict JSON, not an object): never blocks on a FIFO."""
        try:
            value = jsonfile.load(path, MAX_MESSAGE_BYTES)
        except jsonfile.Unreadable:
            return None
        return value if isinstance(value, dict) else None

    def clean_tmp(self, older_than_s: float = 3600.0) -> None:
        """Remove tmp/ leftovers of crashed enqueuers (never linked into new/): those whose writer
        (the pid in the name) is gone, and any older than `older_than_s`."""
        from holon.procs import alive

        now = time.time()
        try:
            entries = list(os.scandir(self.tmp))
        except FileNotFoundError:
            return
        for e in entries:
            parts = e.name.split("-")
            pid = int(parts[2]) if len(parts) > 3 and parts[2].isdigit() else None
            try:
                if (pid is not None and not alive(pid)) or now - e.stat().st_mtime > older_than_s:
                    os.unlink(e.path)
            except FileNotFoundError:
                pass

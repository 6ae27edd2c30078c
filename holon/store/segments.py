"""Ledger segments: a ledger past `[retention] ledger_segment_bytes` is rotated, under the lock its
appenders hold, by one rename of the live file to `<stem>.<date>.<base>.jsonl`.

`base` is the logical offset of the segment's first byte (the sum of the sizes of every segment
before it), so offsets recorded anywhere (state, the memory index, episodes) stay valid: the live
file's bytes begin at the end of the newest segment. The rename is the whole rotation: a crash
before it leaves the live file as it was (the next append rotates), a crash after it leaves the
segment and no live file (the next append creates it); nothing is lost or read twice. A reader
opens the live file and checks that no rotation happened meanwhile (the newest segment is the
same before and after), so what it reads is one consistent ledger.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from holon import clock, config
from holon.store import crashpoint, groupcommit
from holon.store.atomic import fsync_dir

NAME = re.compile(r"^(?P<stem>[a-z_]+)\.(?P<date>\d{4}-\d{2}-\d{2})\.(?P<base>\d{1,20})\.jsonl$")
ROTATED = frozenset({"transcript", "events", "messages", "briefs", "context_episodes"})


class Segment(NamedTuple):  # not a dataclass: every admission imports this module
    path: Path
    base: int  # logical offset of its first byte
    size: int
    mtime: float  # when it was rotated out

    @property
    def end(self) -> int:
        return self.base + self.size


def _stem(path: str | os.PathLike) -> tuple[Path, str]:
    p = Path(path)
    return p.parent, p.name.removesuffix(".jsonl")


def segments(path: str | os.PathLike) -> list[Segment]:
    """The segments of the ledger whose live file is `path`, oldest first."""
    parent, stem = _stem(path)
    found = []
    try:
        entries = list(os.scandir(parent))
    except FileNotFoundError:
        return []
    for e in entries:
        m = NAME.match(e.name)
        if m is None or m["stem"] != stem:
            continue
        try:
            st = e.stat()
        except FileNotFoundError:  # removed by gc meanwhile
            continue
        found.append(Segment(Path(e.path), int(m["base"]), st.st_size, st.st_mtime))
    found.sort(key=lambda s: s.base)
    return found


def live_base(path: str | os.PathLike) -> int:
    segs = segments(path)
    return segs[-1].end if segs else 0


# path -> (device, inode of the live file, mtime of its directory, base): a live file's base is
# fixed from its creation to its rotation, and a rotation makes a new live file in a changed
# directory, so a match of all three saves listing the directory on every read.
_BASES: dict[str, tuple[int, int, int, int]] = {}


def open_live(path: str | os.PathLike) -> tuple[int, int | None]:
    """(the live file's base, a read fd on it or None when there is none), consistent: no
    rotation happened between reading the base and opening the file."""
    while True:
        try:
            fd: int | None = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            fd = None
        if fd is None:
            base = _missing_base(path)
            if base is not None:
                return base, None
            continue
        base = _base_of(path, os.fstat(fd))
        if base is not None:
            return base, fd
        os.close(fd)  # rotated while we listed: try again


def end_offset(path: str | os.PathLike) -> int:
    """The logical size of the ledger: where its next line will begin (nothing is opened)."""
    while True:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            base = _missing_base(path)
            if base is not None:
                return base
            continue
        base = _base_of(path, st)
        if base is not None:
            return base + st.st_size


def _missing_base(path: str | os.PathLike) -> int | None:
    """The base of a live file not made yet (after a rotation), or None when one appeared."""
    base = live_base(path)
    return base if not os.path.exists(path) and live_base(path) == base else None


def _base_of(path: str | os.PathLike, st: os.stat_result) -> int | None:
    """The base of the live file whose stat is `st`; None when it was rotated meanwhile."""
    key = os.fspath(path)
    try:
        dir_mtime = os.stat(os.path.dirname(key) or ".").st_mtime_ns
    except FileNotFoundError:
        return None
    ident = (st.st_dev, st.st_ino, dir_mtime)
    cached = _BASES.get(key)
    if cached is not None and cached[:3] == ident:
        return cached[3]
    base = live_base(path)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return None
    if (now.st_dev, now.st_ino) != ident[:2]:
        return None
    _BASES[key] = (*ident, base)  # the file was still the live one after the listing
    return base


def files_from(path: str | os.PathLike, offset: int) -> Iterator[tuple[int, BinaryIO]]:
    """(base, open file) of each file holding bytes at or after logical `offset`, oldest first,
    the live file last. The caller closes each file it is given."""
    base, fd = open_live(path)
    try:
        for seg in segments(path):
            if seg.base >= base or seg.end <= offset:
                continue  # rotated after the live file was opened, or wholly before `offset`
            try:
                fh = open(seg.path, "rb")
            except FileNotFoundError:
                continue
            yield seg.base, fh
        if fd is not None:
            live, fd = os.fdopen(fd, "rb"), None
            yield base, live
    finally:
        if fd is not None:
            os.close(fd)


def rotate_if_due(path: str | os.PathLike, size: int) -> bool:
    """Rotate the live file into a segment when it has reached the configured size. The caller
    holds the lock every appender of this ledger holds (the agent's state lock)."""
    parent, stem = _stem(path)
    if stem not in ROTATED:
        return False
    limit = config.retention("ledger_segment_bytes")
    if not limit or size < limit:
        return False
    base = live_base(path)
    target = parent / f"{stem}.{clock.now_iso()[:10]}.{base:012d}.jsonl"
    groupcommit.sync(path)  # deferred appends are durable before their file is renamed
    crashpoint.step("jsonl.rotate")
    os.rename(path, target)
    fsync_dir(parent)
    return True


def bytes_before(path: str | os.PathLike, upto: int, n: int) -> bytes:
    """Up to `n` bytes just before logical offset `upto`, from the one file that holds them
    (b"" when none does): what a reader that stopped at `upto` last saw."""
    for base, fh in files_from(path, max(upto - 1, 0)):
        with fh:
            size = os.fstat(fh.fileno()).st_size
            if upto <= base or upto > base + size:
                continue
            start = max(base, upto - n)
            return os.pread(fh.fileno(), upto - start, start - base)
    return b""

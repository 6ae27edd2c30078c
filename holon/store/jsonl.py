"""Append-only JSONL ledgers: one-write appends, torn-line tolerant reads, tail from the end,
rotation into segments.

A crash can leave the last line of a ledger half-written. Readers skip any line
that does not parse (torn or garbage). The next writer, which holds the agent's
state lock, truncates a torn tail (bytes after the last newline) before it
appends, so a torn line never glues itself to the next record.

A ledger is its live file (`transcript.jsonl`) plus the segments rotated out of it
(`transcript.<date>.<base>.jsonl`, see segments.py). Offsets are logical: a segment's bytes
begin at its base, the live file's at the end of the newest segment, so an offset recorded
before a rotation still names the same line after it. Every reader here reads across segments.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from holon.errors import HolonError
from holon.store import groupcommit
from holon.store.atomic import FILE_MODE, dumps, private, write_all, write_bytes
from holon.store.segments import Segment, end_offset, files_from, open_live, rotate_if_due, segments

__all__ = ["Segment", "end_offset", "segments"]

_BLOCK = 64 * 1024


def append(path: str | os.PathLike, record: Any, *, fsync: bool = True) -> None:
    """Append one record as one line. Caller holds the agent's state lock."""
    append_many(path, [record], fsync=fsync)


def append_many(path: str | os.PathLike, records: list[Any], *, fsync: bool = True) -> None:
    """Append records, one line each, with one write. A write that fails part way (a full disk)
    is cut back to where it began, so a failed append leaves no partial line behind. `fsync`:
    durable before this returns, or, inside a group commit (holon.store.groupcommit), by its
    next barrier."""
    if not records:
        return
    data = "".join(dumps(r) + "\n" for r in records).encode("utf-8")
    deferred = fsync and groupcommit.deferring()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, private(FILE_MODE))
    try:
        _repair_torn_tail(fd)
        start = os.fstat(fd).st_size
        try:
            write_all(fd, data, "jsonl.append")
            if fsync and not deferred:
                os.fsync(fd)
        except OSError:
            os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)
    if deferred:
        groupcommit.defer(path, start)
    try:
        rotate_if_due(path, start + len(data))
    except (OSError, HolonError):  # the records are written: a rotation that fails is retried
        pass  # by the next append (and a bad [retention] setting is reported by its readers)


def _complete_end(fd: int, size: int) -> int:
    """Offset just after the last newline of the file (0 if there is none)."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    pos = size
    while pos > 0:
        start = max(0, pos - _BLOCK)
        idx = os.pread(fd, pos - start, start).rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def _repair_torn_tail(fd: int) -> None:
    """Drop bytes after the last newline (a write that a crash cut short)."""
    size = os.fstat(fd).st_size
    end = _complete_end(fd, size)
    if end != size:
        os.ftruncate(fd, end)


def parse_line(line: bytes) -> dict | None:
    """One ledger line as a record; None for a blank, torn or non-object line."""
    line = line.strip()
    if not line:
        return None
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def read(path: str | os.PathLike) -> Iterator[dict]:
    """Every parseable record, in order, across segments; torn and garbage lines are skipped."""
    for _, line in lines(path, 0):
        rec = parse_line(line)
        if rec is not None:
            yield rec


def lines(path: str | os.PathLike, offset: int) -> Iterator[tuple[int, bytes]]:
    """(logical offset, line) of every complete line at or after `offset`, across segments. An
    offset inside a removed segment starts at the next line that is left."""
    for base, fh in files_from(path, offset):
        with fh:
            pos = max(offset - base, 0)
            fh.seek(max(pos - 1, 0))
            if pos > 0 and fh.read(1) != b"\n":  # a stale offset inside a line: the next one
                skipped = fh.readline()
                pos += len(skipped)
                if not skipped.endswith(b"\n"):
                    break
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # torn last line: not committed yet
                yield base + pos, line
                pos += len(line)


def read_bytes_from(path: str | os.PathLike, offset: int) -> bytes:
    """The complete lines at or after `offset`, as bytes (all segments joined)."""
    return b"".join(line for _, line in lines(path, offset))


def read_from(path: str | os.PathLike, offset: int) -> tuple[list[dict], int]:
    """Complete records after logical `offset`, and the offset after the last complete line."""
    records: list[dict] = []
    end = offset
    for here, line in lines(path, offset):
        rec = parse_line(line)
        if rec is not None:
            records.append(rec)
        end = here + len(line)
    return records, end


def tail(path: str | os.PathLike, n: int) -> list[dict]:
    """The last `n` parseable records, reading backwards (the live file, then segments newest
    first): cost does not grow with the ledger's length."""
    if n <= 0:
        return []
    base, fd = open_live(path)
    found: list[dict] = []
    if fd is not None:
        found = _tail_fd(fd, n)
    if len(found) < n:
        for seg in reversed([s for s in segments(path) if s.base < base]):
            try:
                sfd = os.open(seg.path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            found = _tail_fd(sfd, n - len(found)) + found
            if len(found) >= n:
                break
    return found


def _tail_fd(fd: int, n: int) -> list[dict]:
    """The last `n` records of one file; closes `fd`."""
    try:
        pos = _complete_end(fd, os.fstat(fd).st_size)
        carry = b""
        found: list[dict] = []
        while pos > 0 and len(found) < n:
            start = max(0, pos - _BLOCK)
            data = os.pread(fd, pos - start, start) + carry
            pos = start
            carry = b""
            if pos > 0:
                idx = data.find(b"\n")
                if idx < 0:
                    carry = data
                    continue
                carry, data = data[:idx], data[idx + 1 :]
            for line in reversed(data.split(b"\n")):
                rec = parse_line(line)
                if rec is not None:
                    found.append(rec)
                    if len(found) >= n:
                        break
        found.reverse()
        return found
    finally:
        os.close(fd)


def last(path: str | os.PathLike) -> dict | None:
    recs = tail(path, 1)
    return recs[0] if recs else None


def scan(path: str | os.PathLike) -> tuple[int, int, bool]:
    """(good lines, bad lines, torn tail) across segments — for doctor and tests."""
    good = bad = 0
    torn = False
    for _, fh in files_from(path, 0):
        with fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    torn = True
                    break
                if not line.strip():
                    continue
                if parse_line(line) is None:
                    bad += 1
                else:
                    good += 1
    return good, bad, torn


def repair(path: str | os.PathLike) -> int:
    """Move unparseable lines to `<path>.rejects` and rewrite the ledger atomically.

    Returns the number of lines removed. Caller holds the state lock.
    """
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
    except FileNotFoundError:
        return 0
    keep: list[bytes] = []
    rejects: list[bytes] = []
    for line in lines:
        if not line.strip():
            continue
        (keep if parse_line(line) is not None else rejects).append(line)
    if not rejects:
        return 0
    fd = os.open(f"{os.fspath(path)}.rejects", os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        write_all(fd, b"\n".join(rejects) + b"\n", "jsonl.rejects")
    finally:
        os.close(fd)
    write_bytes(path, b"".join(x + b"\n" for x in keep))
    return len(rejects)

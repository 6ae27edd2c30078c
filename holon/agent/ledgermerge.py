"""Ledgers of a home kept in git on two machines: a union merge (`.holon/.gitattributes`) keeps
every line of both sides, and this module makes the result whole again.

- Conflict markers (a merge without the union driver) stop the tick with `ledger_conflict`;
  `holon doctor --repair` moves them, and every other line that is not a record, to
  `<ledger>.rejects` and keeps every record.
- `event_seq` is per agent, so both sides numbered their new events alike. From the first record
  whose event_seq is not above all before it, the records are ordered by (created_at, id) and
  renumbered: both clones settle a merge to the same file, and no record is lost. The tick does
  this before it claims a message (and notes a `ledger_merged` event); doctor reports it.

Each check reads only what was appended since the last clean one (`indexes/ledgers.json`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from holon import jsonfile
from holon.agent.handle import Agent
from holon.errors import OperationFailed
from holon.home.layout import Home
from holon.store import jsonl
from holon.store.atomic import dumps, write_bytes, write_json

MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


def ledgers(home: Home) -> list[Path]:
    try:
        return sorted(p for p in home.ledger.iterdir() if p.name.endswith(".jsonl"))
    except OSError:
        return []


def _checked_file(home: Home) -> Path:
    return home.dot / "indexes" / "ledgers.json"


def _checked(home: Home) -> dict[str, Any]:
    try:
        data = jsonfile.object_of(_checked_file(home), 1 << 20) or {}
    except jsonfile.Unreadable:
        return {}
    return data


def _stamp(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size]


def problems(
    home: Home, *, full: bool = False, tops: dict[str, int] | None = None
) -> dict[str, dict[str, int]]:
    """ledger file name -> {"bad": conflict marker lines, "unordered": events out of order};
    only ledgers with a problem. Reads what was appended since the last clean check unless
    `full` (nothing at all when nothing was); `tops` gets each ledger's highest good event_seq,
    so recording the check needs no second read."""
    seen = {} if full else _checked(home)
    out = {}
    for path in ledgers(home):
        stamp, last = _stamp(path), seen.get(path.name)
        offset = 0
        if isinstance(last, list) and stamp and last[0] == stamp[0] and last[1] <= stamp[1]:
            offset = last[1]
        bad, seqs = _scan(path, offset) if not (stamp and offset == stamp[1]) else (0, [])
        floor = last[2] if offset and isinstance(last, list) and len(last) > 2 else 0
        if tops is not None:
            tops[path.name] = max([floor, *(x for x in seqs if _is_seq(x))])
        unordered = _unordered(seqs, floor) if path.name == "events.jsonl" else 0
        if bad or unordered:
            out[path.name] = {"bad": bad, "unordered": unordered}
    return out


def _scan(path: Path, offset: int) -> tuple[int, list[Any]]:
    bad, seqs = 0, []
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            for line in fh:
                if not line.endswith(b"\n") or not line.strip():
                    continue  # a torn tail is the writer's to repair
                if line.startswith(MARKERS):
                    bad += 1
                    continue
                rec = jsonl.parse_line(line)  # any other line that is not a record: skipped
                if rec is not None:  # by every reader, as it always was
                    seqs.append(rec.get("event_seq"))
    except OSError:
        pass
    return bad, seqs


def _unordered(seqs: list[Any], floor: int) -> int:
    count, top = 0, floor
    for s in seqs:
        if _is_seq(s):
            if s <= top:
                count += 1
            top = max(top, s)
    return count


def record_clean(home: Home, tops: dict[str, int] | None = None) -> None:
    """Note every ledger as checked up to its end (after a clean check or a settle); `tops`:
    the highest event_seq of each, as the check just found it (else read)."""
    data: dict[str, Any] = {}
    for path in ledgers(home):
        stamp = _stamp(path)
        if stamp:
            if tops is not None and path.name in tops:
                last = {"event_seq": tops[path.name]}
            else:
                last = jsonl.last(path) if path.name == "events.jsonl" else None
            seq = (last or {}).get("event_seq")
            data[path.name] = [*stamp, seq if isinstance(seq, int) else 0]
    try:
        write_json(_checked_file(home), data, durable=False)  # a cache: lost, it is rebuilt
    except OSError:
        pass  # the next check reads the whole ledgers again


def conflict(home: Home, found: dict[str, dict[str, int]]) -> OperationFailed | None:
    bad = {name: p["bad"] for name, p in found.items() if p["bad"]}
    if not bad:
        return None
    said = ", ".join(f"{name} ({n} line(s))" for name, n in sorted(bad.items()))
    return OperationFailed(
        f"ledgers of {home.agent_id} hold merge conflict markers: {said}",
        kind="ledger_conflict",
        hint=f"run `holon doctor --repair {home.agent_id}`: those lines move to "
        "<ledger>.rejects and every record is kept (see `git diff`; `.holon/.gitattributes` "
        "makes git union-merge the ledgers)",
    )


def renumber(path: Path) -> int:
    """Settle a merged events ledger: from the first record out of order, order the records by
    (created_at, id) and renumber them. Returns how many were renumbered. Caller holds the
    state lock; every line is a record (the conflict check came first)."""
    try:
        recs = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    except (OSError, ValueError):
        return 0
    first = _first_unordered(recs)
    if first is None:
        return 0
    low = min(r["event_seq"] for r in recs[first:] if _is_seq(r.get("event_seq")))
    start = next(
        i for i, r in enumerate(recs) if _is_seq(r.get("event_seq")) and r["event_seq"] >= low
    )
    base = recs[start - 1].get("event_seq", 0) if start else 0
    tail = sorted(recs[start:], key=lambda r: (str(r.get("created_at")), str(r.get("id"))))
    for n, rec in enumerate(tail, start=(base if isinstance(base, int) else 0) + 1):
        rec["event_seq"] = n
    write_bytes(path, b"".join(dumps(r).encode("utf-8") + b"\n" for r in recs[:start] + tail))
    return len(tail)


def _is_seq(value: Any) -> bool:
    """A good event_seq (holon.agent.handle.event_seq): any other is kept, never renumbered."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _first_unordered(recs: list[dict]) -> int | None:
    top = 0
    for i, rec in enumerate(recs):
        s = rec.get("event_seq")
        if _is_seq(s):
            if s <= top:
                return i
            top = s
    return None


def settle(agent: Agent) -> None:
    """At the tick, before a message is claimed: `ledger_conflict` for lines that are not
    records, a merged events ledger renumbered (with a `ledger_merged` event)."""
    home = agent.home
    tops: dict[str, int] = {}
    found = problems(home, tops=tops)
    error = conflict(home, found)
    if error is not None:
        raise error
    if found:
        with agent.state_lock():
            renumbered = renumber(home.events)
            agent.events_rewritten()
            agent.event("ledger_merged", renumbered=renumbered)
    if found or _checked(home) != _stamps(home):
        record_clean(home, None if found else tops)


def _stamps(home: Home) -> dict[str, Any]:
    """What record_clean would write, without reading any record (cheap when nothing changed)."""
    seen = _checked(home)
    out = {}
    for path in ledgers(home):
        stamp = _stamp(path)
        old = seen.get(path.name)
        if stamp:
            out[path.name] = [*stamp, old[2] if isinstance(old, list) and len(old) > 2 else 0]
    return out

"""Roll-ups: the whole life of an agent in its prompt, older stretches at coarser resolution.

Episodes (level 0) that compaction folded out of the window are rolled up `FANOUT` at a time
into a level-1 roll-up, `FANOUT` level-1 roll-ups into a level-2 one, and so on, like the
carries of a counter. Each roll-up is one immutable line of `ledger/context_rollups.jsonl`
with the turns and the transcript range it covers, the records it covers (ids and ledger
offsets) and a deterministic summary: the turn lines of its children, lines that differ only
in their numbers grouped into one (`turns 2–96 ×95`), the decisions and files, within
`SUMMARY_CHARS`. The same episodes give the same roll-ups, ids included.

The *frontier* (the roll-ups no higher one covers, oldest and coarsest first) and the offset in
the episode ledger past the last rolled-up episode are kept in each line's `cursor` (the newest
line itself is the last frontier entry), so the prompt reads O(levels) records however old the
agent is: the frontier, then the episodes after it, together cover every turn before the window.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon import clock
from holon.context import summaries, turnlines
from holon.context.evidence import excerpt
from holon.home.layout import Home
from holon.store import jsonl
from holon.vocab import SCHEMA_VERSION

FANOUT = 8  # records rolled into one roll-up of the next level
SUMMARY_CHARS = 4_000
LINE_CHARS = 360  # one turn line of a roll-up, at most
MIN_LINE = 120  # a line is squeezed no shorter than this; lines that do not fit then go
MAX_GROUPS = 48  # turn groups a roll-up keeps (the rest are in its children and in search)
MAX_DECISIONS, MAX_FILES = 8, 24
MAX_NOTES, NOTE_CHARS = 8, 300  # model-written episode summaries a roll-up quotes, each cut
TAIL_BYTES = 64 << 10  # read back from the end of the ledger to find its last line


@dataclass
class Entry:
    """A frontier entry: a roll-up by its level, id and offset in the roll-up ledger."""

    level: int
    id: str
    offset: int

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "id": self.id, "offset": self.offset}


def last_line(path: Path) -> tuple[int, dict[str, Any]] | None:
    """The ledger's last complete record and its (logical) offset."""
    end = jsonl.end_offset(path) if path.exists() else 0
    back = TAIL_BYTES
    while end:
        for offset, line in reversed(list(jsonl.lines(path, max(0, end - back)))):
            rec = jsonl.parse_line(line)  # from the newest: the rest need not be parsed
            if rec is not None:
                return offset, rec
        if back >= end:
            return None
        back *= 4
    return None


def read_at(path: Path, offset: int, rec_id: str) -> dict[str, Any] | None:
    """The record `rec_id` at `offset`, or None when the line there is another one (a ledger
    rotated away or edited by hand)."""
    for _, line in jsonl.lines(path, offset):
        rec = jsonl.parse_line(line)
        return rec if rec is not None and rec.get("id") == rec_id else None
    return None


def cursor(home: Home) -> tuple[list[Entry], int]:
    """The frontier (oldest first) and the episode-ledger offset past the last rolled-up
    episode, as the newest roll-up left them."""
    found = last_line(home.context_rollups)
    if found is None:
        return [], 0
    offset, rec = found
    cur = rec.get("cursor") if isinstance(rec.get("cursor"), dict) else {}
    frontier = [
        Entry(e["level"], str(e.get("id")), e["offset"])
        for e in cur.get("frontier") or []
        if isinstance(e, dict) and _ints(e.get("level"), e.get("offset"))
    ]
    level = rec.get("level")
    frontier.append(Entry(level if _ints(level) else 1, str(rec.get("id")), offset))
    ep_offset = cur.get("episodes_offset")
    return frontier, ep_offset if _ints(ep_offset) else 0


def _ints(*values: Any) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values)


# -- rolling up ------------------------------------------------------------------------------


def folded_episodes(home: Home, offset: int, before: int) -> list[tuple[int, int, dict]]:
    """(offset, next offset, record) of the episodes from `offset` on that lie wholly before
    transcript offset `before`, up to the first that does not."""
    out = []
    for here, line in jsonl.lines(home.context_episodes, offset):
        rec = jsonl.parse_line(line)
        if rec is None or not well_formed(rec):
            continue  # not an episode (a hand-edited line): nothing to roll up
        if rec["transcript"]["end_offset"] > before:
            break
        out.append((here, here + len(line), rec))
    return out


def well_formed(rec: dict[str, Any]) -> bool:
    """An episode or roll-up with the fields a roll-up is built from, of the right types."""
    span, turns = rec.get("transcript"), rec.get("turns")
    return (
        isinstance(rec.get("id"), str)
        and isinstance(span, dict)
        and _ints(span.get("start_offset"), span.get("end_offset"))
        and isinstance(turns, dict)
        and all(
            isinstance(turns.get(k), int | None) for k in ("first_index", "last_index", "count")
        )
        and isinstance(rec.get("summary", ""), str)
        and all(isinstance(rec.get(k) or [], list) for k in ("files", "decisions", "groups"))
    )


def roll_up(home: Home, agent_id: str, before: int) -> list[dict[str, Any]]:
    """Append the roll-ups that the episodes folded before transcript offset `before` complete,
    carrying up the levels. Returns them. Idempotent: a repeated call finds the cursor moved."""
    path = home.context_rollups
    frontier, ep_offset = cursor(home)
    pending = folded_episodes(home, ep_offset, before)
    written: list[dict[str, Any]] = []
    found = summaries.recorded(home) if len(pending) >= FANOUT else {}
    while len(pending) >= FANOUT:
        chunk, pending = pending[:FANOUT], pending[FANOUT:]
        ep_offset = chunk[-1][1]
        children = [(off, _with_model_summary(rec, found)) for off, _, rec in chunk]
        frontier = _append(path, agent_id, 1, children, frontier, ep_offset, written)
        while len(frontier) >= FANOUT and _same_level(frontier[-FANOUT:]):
            tail = frontier[-FANOUT:]
            recs = read_many(path, [(e.offset, e.id) for e in tail])
            if recs is None or not all(well_formed(r) for r in recs):
                break  # a roll-up that cannot be read back is left uncarried, never guessed
            children = list(zip([e.offset for e in tail], recs, strict=True))
            level = tail[0].level + 1
            frontier = _append(
                path, agent_id, level, children, frontier[:-FANOUT], ep_offset, written
            )
    return written


def _with_model_summary(rec: dict[str, Any], found: dict[str, dict[str, Any]]) -> dict:
    """An episode with its model-written summary beside its own (holon.context.summaries)."""
    line = found.get(str(rec["id"]))
    return {**rec, "model_summary": line["summary"]} if line else rec


def _notes(recs: list[dict[str, Any]], level: int) -> list[str]:
    """The model-written summaries a roll-up quotes: its episodes' (one line each, cut), or its
    children's notes above level 1; the newest MAX_NOTES."""
    if level > 1:
        notes = [n for r in recs for n in _strs(r, "model_summaries")]
    else:
        notes = []
        for r in recs:
            if isinstance(r.get("model_summary"), str):
                t = r.get("turns") or {}
                text = " ".join(r["model_summary"].split())
                span = f"turns {t.get('first_index')}–{t.get('last_index')}"
                notes.append(f"{span}: {excerpt(text, NOTE_CHARS - 60, 60)}")
    return notes[-MAX_NOTES:]


def _same_level(entries: list[Entry]) -> bool:
    return len({e.level for e in entries}) == 1


def _append(
    path: Path,
    agent_id: str,
    level: int,
    children: list[tuple[int, dict[str, Any]]],
    frontier: list[Entry],
    ep_offset: int,
    written: list[dict[str, Any]],
) -> list[Entry]:
    """Write one roll-up of `children`; returns the frontier with it at the end."""
    rec = build(agent_id, level, children)
    rec["cursor"] = {
        "episodes_offset": ep_offset,
        "frontier": [e.to_dict() for e in frontier],
    }
    start = jsonl.end_offset(path) if path.exists() else 0
    jsonl.append(path, rec)
    found = last_line(path)
    # under the agent's lock the line just written is the last one; its offset is where it began
    offset = found[0] if found is not None and found[1].get("id") == rec["id"] else start
    written.append(rec)
    return [*frontier, Entry(level, rec["id"], offset)]


# -- the record ------------------------------------------------------------------------------


def build(agent_id: str, level: int, children: list[tuple[int, dict[str, Any]]]) -> dict:
    """The roll-up of `children` ((ledger offset, record), oldest first): episodes for level 1,
    roll-ups of `level - 1` above. Deterministic but for `created_at`."""
    recs = [rec for _, rec in children]
    ids = [str(r["id"]) for r in recs]
    seed = f"{level}\0" + "\0".join(ids)
    first, last = recs[0].get("turns") or {}, recs[-1].get("turns") or {}
    groups = merge_groups(recs, level)
    work = list(dict.fromkeys(w for r in recs for w in _work_items(r)))
    rec = {
        "schema_version": SCHEMA_VERSION,
        "id": "ru-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:20],
        "agent_id": agent_id,
        "created_at": clock.now_iso(),
        "level": level,
        "covers": {
            "ledger": "context_episodes" if level == 1 else "context_rollups",
            "ids": ids,
            "offsets": [off for off, _ in children],
        },
        "episodes": sum(r["episodes"] if _ints(r.get("episodes")) else 1 for r in recs),
        "turns": {
            "first_index": first.get("first_index"),
            "last_index": last.get("last_index"),
            "count": sum(r["turns"].get("count") or 0 for r in recs),
            "first_turn_id": first.get("first_turn_id"),
            "last_turn_id": last.get("last_turn_id"),
        },
        "transcript": {
            "start_offset": (recs[0].get("transcript") or {}).get("start_offset"),
            "end_offset": (recs[-1].get("transcript") or {}).get("end_offset"),
        },
        "workspace_id": recs[-1].get("workspace_id") or "agent_home",
        "work_item_ids": work,
        "files": list(dict.fromkeys(f for r in recs for f in _strs(r, "files")))[-MAX_FILES:],
        "decisions": [d for r in recs for d in _strs(r, "decisions")][-MAX_DECISIONS:],
        "groups": groups,
    }
    notes = _notes(recs, level)
    if notes:
        rec["model_summaries"] = notes
    rec["summary"] = summary(rec)
    rec["summary_source"] = "mixed" if notes else "deterministic"
    return rec


def _strs(rec: dict[str, Any], key: str) -> list[str]:
    return [x for x in rec.get(key) or [] if isinstance(x, str)]


def _work_items(rec: dict[str, Any]) -> list[str]:
    if isinstance(rec.get("work_item_ids"), list):
        return [str(w) for w in rec["work_item_ids"]]
    return [str(rec["work_item_id"])] if rec.get("work_item_id") else []


def merge_groups(recs: list[dict[str, Any]], level: int) -> list[dict[str, Any]]:
    """The children's turn groups (an episode's from its summary lines), lines that differ only
    in numbers merged (holon.context.turnlines), bounded to MAX_GROUPS by `_keep`."""
    groups: list[dict[str, Any]] = []
    for rec in recs:
        if level > 1:
            groups += [g for g in rec.get("groups") or [] if isinstance(g, dict)]
            continue
        first = (rec.get("turns") or {}).get("first_index")
        for line in str(rec.get("summary") or "").splitlines():
            g = turnlines.parse(line, first)
            if g is not None:
                g["texts"] = [[t, turnlines.squeeze(text, LINE_CHARS)] for t, text in g["texts"]]
                groups.append(g)
    return _keep(turnlines.merge(groups))


def _keep(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_GROUPS, chosen by `_weight` (ties: the older first), in turn order."""
    if len(groups) <= MAX_GROUPS:
        return groups
    ranked = sorted(range(len(groups)), key=lambda i: (-_weight(groups[i]), i))
    keep = sorted(ranked[:MAX_GROUPS])
    return [groups[i] for i in keep]


def _weight(g: dict[str, Any]) -> int:
    """What to keep first: what the operator said once, a line standing for many turns, the rest."""
    text = str(g["texts"][0][1])
    if g.get("count", 1) == 1 and text.startswith("operator"):
        return 3
    return 2 if g.get("count", 1) > turnlines.VARIANTS else 1


def summary(rec: dict[str, Any]) -> str:
    """The turn groups in turn order, then decisions and files, within SUMMARY_CHARS: when they
    do not fit, each line is squeezed (holon.context.turnlines), down to MIN_LINE; the lines
    that still do not fit are counted, not shown."""
    lines = [line for g in rec["groups"] for line in turnlines.render(g)]
    tail = []
    if rec.get("decisions"):
        tail.append("decisions: " + "; ".join(excerpt(d, 120, 40) for d in rec["decisions"][-4:]))
    if rec.get("files"):
        tail.append("files: " + ", ".join(rec["files"][-12:]))
    tail = [excerpt(t, 400, 100) for t in tail]
    tail = [f"by the model, {n}" for n in rec.get("model_summaries") or []][-4:] + tail
    room = SUMMARY_CHARS - sum(len(t) + 1 for t in tail) - 80
    if sum(len(line) + 1 for line in lines) > room:
        per = max(MIN_LINE, room // max(1, len(lines)) - 1)
        lines = [turnlines.squeeze(line, per) for line in lines]
    out, used = [], 0
    for n, line in enumerate(lines):
        if used + len(line) + 1 > room:
            out.append(f"… {len(lines) - n} more turn lines (MemorySearch finds them)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out + tail)


def heading(rec: dict[str, Any]) -> str:
    t = rec.get("turns") or {}
    work = rec.get("work_item_ids") or []
    more = f" · work {', '.join(work[:3])}" + (f" +{len(work) - 3}" if len(work) > 3 else "")
    return (
        f"## Roll-up {rec['id']} · turns {t.get('first_index')}–{t.get('last_index')} · "
        f"{rec.get('episodes')} episodes · {rec.get('created_at', '')[:10]}"
        + (more if work else "")
    )


def read_many(path: Path, refs: list[tuple[int, str]]) -> list[dict[str, Any]] | None:
    """The records `refs` ((offset, id), in ledger order) read in one pass over the span they lie
    in; None when one of them is not there."""
    if not refs:
        return []
    want, found = dict(refs), {}
    last = max(want)
    for here, line in jsonl.lines(path, min(want)):
        if here > last:
            break
        if here in want:
            rec = jsonl.parse_line(line)
            if rec is None or rec.get("id") != want[here]:
                return None
            found[here] = rec
    return [found[off] for off, _ in refs] if len(found) == len(want) else None


def children(home: Home, rec: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The records a roll-up covers, read back by offset; None when one cannot be."""
    covers = rec.get("covers") or {}
    path = home.context_episodes if covers.get("ledger") == "context_episodes" else None
    offsets, ids = covers.get("offsets") or [], covers.get("ids") or []
    if not all(isinstance(o, int) for o in offsets) or len(offsets) != len(ids):
        return None
    out = read_many(
        path or home.context_rollups, [(o, str(i)) for o, i in zip(offsets, ids, strict=True)]
    )
    return out or None

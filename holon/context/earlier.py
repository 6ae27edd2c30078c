"""What the episode block shows of the turns before the window: a cover of them all, newest finest.

1. The cover: the roll-up frontier (holon.context.rollups), then the episodes after it that
   begin before the window start. Together they cover every folded turn exactly once, in
   O(levels) records however old the agent is. With no roll-up yet, the newest TAIL_SCAN
   episodes (holon.context.episodes.recent).
2. Refinement: the newest roll-up is replaced by the records it covers while the whole still
   fits, and again, so recent stretches show at the finest resolution the budget allows.
3. Fitting: when the cover does not fit, neighbours that hold only the same routine line
   (turns that differ only in numbers, holon.context.turnlines) become one line; then the
   oldest records are cut to their first line, then merged into one line naming the turns
   they span (MemorySearch finds them); the newest is shortened last, never dropped.

Deterministic: the same ledgers, window start and budget give the same block.
"""

from __future__ import annotations

from typing import Any

from holon.context import blockcache, episodes, rollups, summaries, turnlines, window
from holon.context.evidence import excerpt
from holon.home.layout import Home
from holon.store import jsonl

FIRST_LINE = 200  # characters of an older record cut to its first line
MIN_ROOM = 64  # tokens: with less, the block shows no episodes
MAX_EXPANSIONS = 16  # refinement steps per block (each reads FANOUT records)
_LAST: list[tuple[tuple, list[tuple[list[str], str]]]] = []  # the last block_parts, by its key


def is_rollup(rec: dict[str, Any]) -> bool:
    return isinstance(rec.get("level"), int) and str(rec.get("id", "")).startswith("ru-")


def cover(home: Home, start: int) -> list[dict[str, Any]]:
    """Records covering the folded turns before transcript offset `start`, oldest first; an
    episode with a model-written summary shows that one (holon.context.summaries)."""
    found = summaries.recorded(home)
    return [summaries.shown(rec, found) for rec in _cover(home, start)]


def _cover(home: Home, start: int) -> list[dict[str, Any]]:
    frontier, ep_offset = rollups.cursor(home)
    if not frontier:
        return episodes.recent(home.context_episodes, start)
    out = []
    for entry in frontier:
        rec = rollups.read_at(home.context_rollups, entry.offset, entry.id)
        if rec is not None and rollups.well_formed(rec):
            out.append(rec)
    for _, line in jsonl.lines(home.context_episodes, ep_offset):
        rec = jsonl.parse_line(line)
        if rec is None or not rollups.well_formed(rec) or not rec.get("summary"):
            continue  # a hand-edited line is not shown
        if rec["transcript"]["start_offset"] >= start:
            break  # later episodes cover turns still in the window
        out.append(rec)
    return out


def _text(rec: dict[str, Any], summary: str | None = None) -> str:
    head = rollups.heading(rec) if is_rollup(rec) else episodes.heading(rec)
    return f"{head}\n{rec['summary'] if summary is None else summary}".rstrip()


def _cost(text: str) -> int:
    return window.estimate(text) + 2


def refine(home: Home, recs: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """Replace the newest roll-up by what it covers while the whole fits `room` tokens."""
    total = sum(_cost(_text(r)) for r in recs)
    found = summaries.recorded(home)
    top = len(recs) - 1  # no roll-up lies after it
    for _ in range(MAX_EXPANSIONS):
        idx = next((i for i in range(top, -1, -1) if is_rollup(recs[i])), None)
        if idx is None:
            break
        kids = rollups.children(home, recs[idx])
        if not kids:
            break
        kids = [summaries.shown(k, found) for k in kids]
        grown = total - _cost(_text(recs[idx])) + sum(_cost(_text(k)) for k in kids)
        if grown > room:
            break
        recs, total = recs[:idx] + kids + recs[idx + 1 :], grown
        top = idx + len(kids) - 1
    return recs


def routine(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The one turn group a record's summary consists of, or None when it says more."""
    groups = [turnlines.parse(line) for line in str(rec.get("summary") or "").splitlines()]
    if not groups or any(g is None for g in groups):
        return None
    merged = turnlines.merge(groups)  # type: ignore[arg-type]
    return merged[0] if len(merged) == 1 else None


def coalesce(parts: list[tuple[list[str], str, dict]]) -> list[tuple[list[str], str, dict]]:
    """Neighbouring parts that hold only the same routine line, as one part."""
    out: list[tuple[list[str], str, dict]] = []
    run: list[tuple[dict, dict]] = []  # (record, its group)

    def flush() -> None:
        if len(run) == 1:
            out.append(([str(run[0][0]["id"])], _text(run[0][0]), run[0][0]))
        elif run:
            (group,) = turnlines.merge([g for _, g in run])
            first, last = run[0][0], run[-1][0]
            rec = {**last, "turns": _span(first, last), "summary": turnlines.render(group)[0]}
            head = f"## Routine · {len(run)} records · turns {group['first']}–{group['last']}"
            out.append(([str(r["id"]) for r, _ in run], f"{head}\n{rec['summary']}", rec))
        run.clear()

    for ids, text, rec in parts:
        group = routine(rec) if len(ids) == 1 else None
        if group is None or (run and turnlines.key(group["texts"][0][1]) != run[0][1]["key"]):
            flush()
        if group is None:
            out.append((ids, text, rec))
        else:
            run.append((rec, {**group, "key": turnlines.key(group["texts"][0][1])}))
    flush()
    return out


def fit(recs: list[dict[str, Any]], room: int) -> list[tuple[list[str], str]]:
    """(ids, text) per shown part within `room` tokens, oldest first (step 3 above)."""
    parts = [([str(r["id"])], _text(r), r) for r in recs]
    total = sum(_cost(t) for _, t, _ in parts)
    if total > room:
        parts = coalesce(parts)
        total = sum(_cost(t) for _, t, _ in parts)
    for i in range(len(parts) - 1):  # the oldest first: cut to the first line
        if total <= room:
            break
        ids, text, rec = parts[i]
        first = (str(rec.get("summary") or "").splitlines() or [""])[0]
        short = _text(rec, excerpt(first, FIRST_LINE * 2 // 3, FIRST_LINE // 3))
        total += _cost(short) - _cost(text)
        parts[i] = (ids, short, rec)
    while total > room and len(parts) > 2:  # then merge the oldest into one line
        (_, a_text, a), (_, b_text, b) = parts[0], parts[1]
        merged = _span_line(a, b)
        total += _cost(merged) - _cost(a_text) - _cost(b_text)
        parts[:2] = [([], merged, {**a, "turns": _span(a, b)})]  # shown by span only
    if total > room and parts:  # the newest always shows, shortened to the room there is
        ids, text, rec = parts[-1]
        rest = room - sum(_cost(t) for _, t, _ in parts[:-1])
        head = text.split("\n", 1)[0]
        summary = episodes.fit_summary(str(rec.get("summary") or ""), (rest - _cost(head)) * 4)
        parts[-1] = (ids, _text(rec, summary) if rest >= 64 else head, rec)
    return [(ids, text) for ids, text, _ in parts]


def _span(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {
        "first_index": (a.get("turns") or {}).get("first_index"),
        "last_index": (b.get("turns") or {}).get("last_index"),
    }


def _span_line(a: dict[str, Any], b: dict[str, Any]) -> str:
    t = _span(a, b)
    span = (
        f"turns {t['first_index']}–{t['last_index']}"
        if t["first_index"] is not None and t["last_index"] is not None
        else "earlier turns"
    )
    return f"## Earlier · {span}: not shown to fit the context window; MemorySearch finds them"


def block_parts(home: Home, start: int, room: int) -> list[tuple[list[str], str]]:
    """The cover of the turns before `start` within `room` tokens: (ids shown, text) per part,
    oldest first; nothing when there is no room to speak of. Every round of a turn asks again
    and the answer moves only with a compaction that changes the cover, so the last one is kept,
    in the process and between ticks (holon.context.blockcache)."""
    if room < MIN_ROOM:
        return []
    key = blockcache.key(home, start, room)
    if _LAST and _LAST[0][0] == (str(home.root), key):
        return _LAST[0][1]
    kept = blockcache.load(home)
    if kept is not None and kept[0].get("key") == key:
        parts = kept[1]
    else:
        recs = cover(home, start)
        ids = blockcache.cover_key(home, room, [str(r["id"]) for r in recs])
        if kept is not None and kept[0].get("cover") == ids:
            parts = kept[1]  # the same records: the same block
        else:
            parts = fit(refine(home, recs, room), room) if recs else []
        if recs:  # nothing folded yet: nothing worth keeping
            blockcache.save(home, key, ids, parts)
    _LAST[:] = [((str(home.root), key), parts)]
    return parts

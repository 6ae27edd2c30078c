"""Turn lines, the unit of episode and roll-up summaries: `turn N — kind: asked — ran … — changed …
— replied: …`. Lines that differ only in their numbers (routine turns) are grouped into one
(`turns A–B ×N — …`), a few such lines kept apart so that facts differing in a number are not
merged; a line too long is squeezed part by part, what was asked last (its start and its end)."""

from __future__ import annotations

import re
from typing import Any

from holon.context.evidence import excerpt

SEP = " — "
VARIANTS = 3  # distinct lines a group shows one by one; with more, its first stands for all
_TURN = re.compile(r"^turns? (\d+)(?:–(\d+) ×(\d+))? — (.*)$")
_DIGITS = re.compile(r"\d+")
# (prefix of a part, the length it is cut to), in the order parts give way: to these, then less
_YIELD = (("ran ", 48), ("changed ", 48), ("replied: ", 72))
_YIELD_MORE = (("ran ", 30), ("changed ", 30), ("replied: ", 36))


def parse(line: str, fallback: Any = None) -> dict[str, Any] | None:
    """A summary line as a group (`texts`: [[turn, text]], `count`, `first`, `last`); None for
    a line that is not a turn line (files, verification, a count of turns not shown)."""
    m = _TURN.match(line)
    if m:
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        count = int(m.group(3)) if m.group(3) else 1
        return {"texts": [[first, m.group(4)]], "count": count, "first": first, "last": last}
    for prefix in ("earlier turn" + SEP, "earlier turns ×"):  # turns from before turn indexes
        if line.startswith(prefix):
            count, _, text = line.removeprefix(prefix).partition(SEP)
            n = int(count) if prefix.endswith("×") and count.isdigit() else 1
            text = text if prefix.endswith("×") else line.removeprefix(prefix)
            return {"texts": [[fallback, text]], "count": n, "first": fallback, "last": fallback}
    return None


def key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.split()))


def _add(merged: dict[str, dict[str, Any]], g: dict[str, Any]) -> str | None:
    """Fold group `g` into `merged` by its key; returns the key when `g` opened a new group."""
    if not g.get("texts"):
        return None
    k = key(str(g["texts"][0][1]))
    have = merged.get(k)
    if have is None:
        merged[k] = {**g, "texts": [list(t) for t in g["texts"]]}
        return k
    have["count"] += int(g.get("count") or 1)
    have["last"] = g.get("last", have["last"])
    seen = {t for _, t in have["texts"]}
    for t in g["texts"]:
        if t[1] not in seen and len(have["texts"]) <= VARIANTS:
            have["texts"].append(list(t))
            seen.add(t[1])
    return None


def merge(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups whose first lines differ only in numbers merged, in the order of their first turn;
    each keeps up to VARIANTS + 1 distinct lines."""
    merged: dict[str, dict[str, Any]] = {}
    for g in groups:
        _add(merged, g)
    return list(merged.values())


def render(g: dict[str, Any]) -> list[str]:
    """A group as lines: each of a few distinct lines, or the first standing for all."""
    texts = g["texts"]
    if len(texts) > VARIANTS or g.get("count", 1) > len(texts):  # not every line is listed
        span = f"turns {g['first']}–{g['last']}" if g["first"] is not None else "earlier turns"
        return [f"{span} ×{g['count']}{SEP}{texts[0][1]}"]
    return [
        f"turn {turn}{SEP}{text}" if turn is not None else f"earlier turn{SEP}{text}"
        for turn, text in texts
    ]


def group_lines(lines: list[str]) -> list[str]:
    """Turn lines with routine repeats grouped where the first of them stood; other lines stay."""
    merged: dict[str, dict[str, Any]] = {}
    order: list[tuple[bool, str]] = []  # (is a group key, the line or the key)
    for line in lines:
        g = parse(line)
        if g is None:
            order.append((False, line))
        elif (k := _add(merged, g)) is not None:
            order.append((True, k))
    out: list[str] = []
    for is_group, item in order:
        out += render(merged[item]) if is_group else [item]
    return out


def squeeze(line: str, limit: int) -> str:
    """`line` within `limit` characters: the commands, files and reply give way first, then
    what was asked keeps its start and its end."""
    if len(line) <= limit:
        return line
    parts = line.split(SEP)
    for prefix, cut in _YIELD + _YIELD_MORE:
        for i, part in enumerate(parts):
            if i >= 2 and part.startswith(prefix) and len(part) > cut:
                parts[i] = excerpt(part, cut - 11, 8)  # a command keeps its exit status
        if len(SEP.join(parts)) <= limit:
            return SEP.join(parts)
    if len(parts) > 1:  # what was asked: its start and its end, in the room left
        room = limit - len(SEP.join(parts)) + len(parts[1])
        parts[1] = excerpt(parts[1], max(40, (room - 3) * 2 // 3), max(20, (room - 3) // 3))
    text = SEP.join(parts)
    if len(text) <= limit:
        return text
    return excerpt(text, max(40, (limit - 3) * 2 // 3), max(20, (limit - 3) // 3))

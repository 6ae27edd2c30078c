"""Place a file's hunks together, so that the offsets of consecutive hunks agree.

Each hunk's eligible places depend on where the previous hunk went: its hint is
the header's line moved by the previous hunk's offset, and it must start after
the previous hunk ends (`matcher.Locator.eligible`). Of all the complete
placements, the one whose offset changes least in total wins (the sum of
|offset - previous offset|, starting from 0): drift moves a hunk a few lines,
and a wrong copy of one hunk's lines shows as a jump that the next hunks have
to undo. When two different placements are equally good, the file is
`ambiguous_context` at the first hunk where they differ. For a single hunk this
is the nearest-to-hint rule. One of several matches beyond a hunk's window
(`far`) is kept only when the next hunk then sits exactly at its hint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from holon.patch.errors import patch_error
from holon.patch.matcher import Locator, Placement
from holon.patch.model import Hunk

MAX_STATES = 64  # places kept per hunk (the cheapest); enough for any real file


@dataclass
class _State:
    placement: Placement
    offset: int
    end: int
    cost: int
    edges: list[tuple[_State | None, int]] = field(default_factory=list)  # (previous, cost there)


def hinted_start(hunk: Hunk) -> int:
    """The 0-based line the header names (for a pure insertion: the line after which it goes)."""
    return hunk.old_start if not hunk.old_lines else max(hunk.old_start - 1, 0)


def place_all(locator: Locator, hunks: list[Hunk]) -> list[Placement]:
    """Where each hunk applies; raises PatchError when a hunk has no place or the best placement
    is not unique."""
    if not hunks:
        return []
    placements = _place(locator, hunks)
    if all(p.search in ("hint", "line") for p in placements) or locator.exhaustive:
        return placements
    locator.exhaustive = True  # a hunk moved: a match at another hint may be a copy too
    return _place(locator, hunks)


def _place(locator: Locator, hunks: list[Hunk]) -> list[Placement]:
    start = _State(Placement(0, False), 0, 0, 0)
    layers: list[list[_State]] = []
    previous: list[_State] = [start]
    for number, hunk in enumerate(hunks, 1):
        hinted = hinted_start(hunk)
        states: dict[int, _State] = {}
        for prev in previous:
            for p in locator.eligible(hunk, hinted + prev.offset, prev.end):
                offset = p.start - hinted
                cost = prev.cost + abs(offset - prev.offset)
                state = states.get(p.start)
                if state is None:
                    end = p.start + len(hunk.old_lines)
                    state = states[p.start] = _State(p, offset, end, cost)
                elif cost < state.cost:
                    state.placement, state.cost = p, cost
                state.edges.append((prev if prev is not start else None, cost))
        if not states:
            best = min(previous, key=lambda s: s.cost)
            raise locator.refusal(hunk, number, hinted + best.offset, best.end)
        previous = sorted(states.values(), key=lambda s: (s.cost, s.placement.start))[:MAX_STATES]
        layers.append(previous)
    return _unique_best(locator, hunks, layers)


def _unique_best(
    locator: Locator, hunks: list[Hunk], layers: list[list[_State]]
) -> list[Placement]:
    """The placement of least total cost, walked back from the last hunk; `ambiguous_context` at
    the first hunk where two placements of that cost differ."""
    best = min(s.cost for s in layers[-1])
    chosen: list[set[int]] = [set() for _ in layers]
    frontier = {id(s): s for s in layers[-1] if s.cost == best}
    for i in range(len(layers) - 1, -1, -1):
        chosen[i] = {id(s) for s in frontier.values()}
        earlier: dict[int, _State] = {}
        for state in frontier.values():
            for prev, cost in state.edges:
                if cost == state.cost and prev is not None:
                    earlier[id(prev)] = prev
        frontier = earlier
    placements: list[Placement] = []
    offset = end = 0
    for i, layer in enumerate(layers):
        tied = [s for s in layer if id(s) in chosen[i]]
        hint = hinted_start(hunks[i]) + offset
        if len(tied) > 1:
            raise _tie(locator, hunks[i], i + 1, tied, hint)
        p = tied[0].placement
        if p.search == "far" and not _confirmed(layers, chosen, i, tied[0]):
            raise locator.unconfirmed(hunks[i], i + 1, hint, end)
        nearest = min(abs(q.start - hint) for q in locator.eligible(hunks[i], hint, end))
        if abs(p.start - hint) > nearest:  # the other hunks' offsets chose a further match
            p = replace(p, search="patch")
        placements.append(p)
        offset, end = tied[0].offset, tied[0].end
    return placements


def _confirmed(layers: list[list[_State]], chosen: list[set[int]], i: int, state: _State) -> bool:
    """Is the hunk after `state` placed at its hint from it (the same offset)?"""
    if i + 1 == len(layers):
        return False
    after = [s for s in layers[i + 1] if id(s) in chosen[i + 1]]
    return len(after) == 1 and after[0].offset == state.offset


def _tie(locator: Locator, hunk: Hunk, number: int, tied: list[_State], hint: int) -> Exception:
    """Two equally good placements: as far from this hunk's hint (the window's rule), or equally
    good only once the other hunks are counted."""
    tied.sort(key=lambda s: s.placement.start)
    starts = [s.placement.start for s in tied]
    if len({abs(s - hint) for s in starts}) == 1:
        return locator.ambiguity(hunk, number, starts, hint)
    hinted = hinted_start(hunk)
    shown = ", ".join(f"{s.placement.start + 1} ({s.offset:+d})" for s in tied[:10])
    return patch_error(
        "ambiguous_context",
        f"{locator.path}: hunk {number} ({hunk.header}) fits at lines {shown} (offset from its "
        "header), and the placements of this file's hunks through each of them move the hunks "
        "equally far from their headers; add unchanged lines that occur only once around the "
        "change as ' ' context lines, or correct the header's line number",
        path=locator.path,
        hunk=number,
        hint_line=hinted + 1,
        scope="patch",
        candidate_count=len(tied),
        candidates=[{"line": s.placement.start + 1, "distance": s.offset} for s in tied[:50]],
    )

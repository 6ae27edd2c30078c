"""Place a file's hunks: each where the evidence puts it, or nowhere (a refusal, never a guess).

A hunk's offset is how far from its header's line it applies. A patch whose
every hunk is exactly at its header's line applies there (a diff of this very
file). Otherwise a hunk's hint is its header's line moved by the offset of the
nearest placed hunk before it, and the evidence, strongest first, is:

1. its old lines (context and removed lines) are exactly at the hint, trusted
   only when the hunk before it is placed (or there is none) and no other
   match lies within `radius` of it (lines inserted between the hunks would
   put the place at that copy);
2. they match once after the previous hunk (`window` when within `radius`
   lines of the hint, else `file`); the one match near the hint while others
   lie further off is no evidence, since a header 50 or 200 lines off puts a
   copy near it as easily as the true place;
3. the other hunks: every hunk's matches are narrowed to those that leave the
   others room in file order (`_in_order`), and the one left is the place; or,
   once the hunk before it is placed, the one at its hint (1). A match at the
   next hunk's offset alone proves nothing: lines may have been inserted
   between the two.

Old lines without text (blank lines, lone braces: `matcher.has_text`) recur all
over a file, so such a hunk is placed only by the literal fit, by a match left
alone by the others, or at the offset both neighbours agree on. A hunk at an
offset neither neighbour shares, whose lines also match at a neighbour's
offset, is refused (`_check_contest`). Several candidates without evidence are
`ambiguous_context`: no nearest-wins. A hunk that only adds lines (a -U0
insertion) has nothing to match: it goes at its hint when the hunks around it
agree on the offset (or it is at the file's start or end), and is refused when
they disagree, since lines were added or removed near it.
"""

from __future__ import annotations

from dataclasses import dataclass

from holon.patch.matcher import Locator, Placement, at_edge, carries_text, radius
from holon.patch.model import Hunk


@dataclass
class _Slot:
    hunk: Hunk
    number: int
    hinted: int  # the header's 0-based line
    placement: Placement | None = None

    @property
    def offset(self) -> int:
        assert self.placement is not None
        return self.placement.start - self.hinted

    @property
    def start(self) -> int:
        assert self.placement is not None
        return self.placement.start

    @property
    def end(self) -> int:
        return self.start + len(self.hunk.old_lines)


def hinted_start(hunk: Hunk) -> int:
    """The 0-based line the header names (for a pure insertion: the line after which it goes)."""
    return hunk.old_start if not hunk.old_lines else max(hunk.old_start - 1, 0)


def place_all(locator: Locator, hunks: list[Hunk]) -> list[Placement]:
    """Where each hunk applies; raises PatchError for the first hunk without a single place."""
    slots = [_Slot(h, i, hinted_start(h)) for i, h in enumerate(hunks, 1)]
    literal = _literal(locator, slots)
    if literal is not None:
        return literal
    for slot in slots:
        if carries_text(slot.hunk):
            slot.placement = _firm(locator, slots, slot)
    progress = True
    while progress:
        progress = False
        options = _in_order(locator, slots)
        for slot in slots:
            if slot.placement is None and slot.hunk.old_lines:
                slot.placement = _between(slots, slot, *options[slot.number])
                progress |= slot.placement is not None
    for slot in slots:
        if slot.placement is None and slot.hunk.old_lines:
            raise _refusal(locator, slots, slot)
        if slot.placement is not None:
            _check_contest(locator, slots, slot)
        if slot.placement is None:
            slot.placement = _insertion(locator, slots, slot)
    return [s.placement for s in slots if s.placement is not None]


def _literal(locator: Locator, slots: list[_Slot]) -> list[Placement] | None:
    """Every hunk exactly at its header's line, in order (a diff of this very file): that is the
    placement, whatever copies lie elsewhere."""
    end = 0
    for slot in slots:
        start = slot.hinted
        if start < end or (
            locator.at(slot.hunk, start) is not False
            if slot.hunk.old_lines
            else start > len(locator.keys) or slot.hunk.at_eof and start != len(locator.keys)
        ):
            return None
        end = start + len(slot.hunk.old_lines)
    return [Placement(s.hinted, False, "line" if not s.hunk.old_lines else "hint") for s in slots]


def _neighbours(slots: list[_Slot], slot: _Slot) -> tuple[_Slot | None, _Slot | None]:
    i = slot.number - 1
    before = next((s for s in reversed(slots[:i]) if s.placement is not None), None)
    after = next((s for s in slots[i + 1 :] if s.placement is not None), None)
    return before, after


def _firm(locator: Locator, slots: list[_Slot], slot: _Slot) -> Placement | None:
    """A hunk with text, by its own lines: at its hint, else its one match after the previous
    hunk."""
    hunk, n = slot.hunk, len(locator.keys)
    before, _ = _neighbours(slots, slot)
    lo = before.end if before else 0
    hint = slot.hinted + (before.offset if before else 0)
    trusted = _adjacent(slots, slot, -1) is not None  # the hunk before it is placed, or none is
    starts, relaxed = locator.matches(hunk, lo)
    starts = at_edge(hunk, starts, n)
    if trusted and hint in starts and _alone(starts, hint, radius(hunk)):
        return Placement(hint, relaxed, "hint")
    if len(starts) != 1:
        return None  # several, none at the hint: the nearest is no evidence
    near = abs(starts[0] - hint) <= radius(hunk)
    return Placement(starts[0], relaxed, "window" if near else "file")


def _in_order(locator: Locator, slots: list[_Slot]) -> dict[int, tuple[list[int], bool]]:
    """Each unplaced hunk's matches (and whether relaxed) that leave room for the other hunks in
    file order: after the earliest end of the hunks before it, before the latest start of those
    after it (a placed hunk has its one place), narrowed until nothing changes."""
    n = len(locator.keys)
    sized = [s for s in slots if s.hunk.old_lines]
    options: dict[int, tuple[list[int], bool]] = {}
    for slot in sized:
        if slot.placement is not None:
            options[slot.number] = ([slot.start], slot.placement.relaxed)
        else:
            starts, relaxed = locator.matches(slot.hunk)
            options[slot.number] = (at_edge(slot.hunk, starts, n), relaxed)
    changed = True
    while changed:
        changed = False
        floor = 0
        for slot in sized:
            starts, relaxed = options[slot.number]
            kept = [s for s in starts if s >= floor]
            floor = min(kept) + len(slot.hunk.old_lines) if kept else floor
            changed |= kept != starts
            options[slot.number] = (kept, relaxed)
        ceiling = n
        for slot in reversed(sized):
            starts, relaxed = options[slot.number]
            kept = [s for s in starts if s + len(slot.hunk.old_lines) <= ceiling]
            ceiling = max(kept) if kept else ceiling
            changed |= kept != starts
            options[slot.number] = (kept, relaxed)
    return options


def _between(slots: list[_Slot], slot: _Slot, starts: list[int], relaxed: bool) -> Placement | None:
    """A hunk by the others: the one match that leaves them room in file order; for a hunk with
    text, the one at its hint once the hunk before it is placed; for one without, the one at the
    offset both neighbours agree on."""
    before, after = _neighbours(slots, slot)
    if len(starts) == 1:
        return Placement(starts[0], relaxed, "between" if before or after else "file")
    prior, later = _adjacent(slots, slot, -1), _adjacent(slots, slot, 1)
    if carries_text(slot.hunk):  # its hint, once the hunk before it is placed
        offsets, guard = ({prior} if isinstance(prior, int) else set()), True
    else:  # the offset both neighbours have (then a copy nearby is no rival), or 0
        agreed = _agreed(prior, later)
        offsets, guard = (set() if agreed is None else {agreed}), not isinstance(later, int)
    confirmed = [s for s in starts if s - slot.hinted in offsets]
    if len(confirmed) != 1 or (guard and not _alone(starts, confirmed[0], radius(slot.hunk))):
        return None
    return Placement(confirmed[0], relaxed, "hint")


def _alone(starts: list[int], start: int, reach: int) -> bool:
    """Is `start` the only match within `reach` lines of itself? A copy a few lines off the hint
    is as likely the place: lines may have been inserted between the hunks."""
    return not any(s != start and abs(s - start) <= reach for s in starts)


_NONE = object()  # no hunk with old lines on that side


def _adjacent(slots: list[_Slot], slot: _Slot, step: int) -> int | object | None:
    """The offset of the hunk with old lines just before (`step` -1) or after (1) `slot`: None
    while it is unplaced, `_NONE` after the last; before the first, 0 (the header's own line)."""
    i = slot.number - 1 + step
    while 0 <= i < len(slots) and not slots[i].hunk.old_lines:
        i += step
    if not 0 <= i < len(slots):
        return 0 if step < 0 else _NONE
    return slots[i].offset if slots[i].placement is not None else None


def _agreed(prior: int | object | None, later: int | object | None) -> int | None:
    """The offset the hunks around a hunk agree on: both neighbours' when equal (the start of the
    file counts as 0); that of the one before when none follows and it has not moved (the line
    numbers have not proved wrong); else None (lines were added or removed near the hunk, by how
    much just there nothing says)."""
    if not isinstance(prior, int):
        return None
    if later is _NONE:
        return prior if prior == 0 else None
    return prior if later == prior else None


def _insertion(locator: Locator, slots: list[_Slot], slot: _Slot) -> Placement:
    """A hunk that only adds lines: at its hint, when the hunks around it agree on the offset."""
    hunk, n = slot.hunk, len(locator.keys)
    before, after = _neighbours(slots, slot)
    lo, hi = before.end if before else 0, after.start if after else n
    if n == 0 or (hunk.at_eof and after is None and lo <= n):
        return Placement(n, False, "line")
    if slot.hinted == 0 and before is None:
        return Placement(0, False, "line")  # the start of the file is where it was
    offset = _agreed(before.offset if before else 0, after.offset if after else _NONE)
    hint = slot.hinted + (offset if offset is not None else before.offset if before else 0)
    if offset is None:
        moved = ", ".join(
            f"hunk {s.number} {s.offset:+d}" for s in (before, after) if s is not None
        )
        why = (
            f"the hunks around it moved ({moved}), so lines were added or removed near it "
            "since the diff was made, by how much just there nothing says"
        )
    elif hunk.at_eof:
        why = "a '\\ No newline at end of file' marker pins it to the end of the file"
    elif hint > n:
        why = f"the file has only {n} lines"
    elif not lo <= hint <= hi:
        side = "before the end of the previous" if hint < lo else "after the start of the next"
        why = f"line {hint} lies {side} hunk"
    else:
        return Placement(hint, False, "line")
    raise locator.insertion_refused(hunk, slot.number, hint, why)


def _check_contest(locator: Locator, slots: list[_Slot], slot: _Slot) -> None:
    """Raise `ambiguous_context` when a hunk sits at an offset neither neighbour shares while its
    lines also match at a neighbour's offset: a copy near a wrong hint, or the place the other
    hunks confirm; nothing says which."""
    before, after = _neighbours(slots, slot)
    offsets = {s.offset for s in (before, after) if s is not None}
    if not offsets or slot.offset in offsets:
        return
    hi = after.start if after else len(locator.keys)
    starts, _ = locator.matches(slot.hunk, before.end if before else 0, hi)
    rivals = [s for s in starts if s - slot.hinted in offsets]
    if rivals:
        hint = slot.hinted + (before.offset if before else 0)
        moved = ", ".join(f"hunk {s.number} {s.offset:+d}" for s in (before, after) if s)
        why = (
            f"its lines match at line {slot.start + 1} ({slot.offset:+d} from its header) and at "
            f"the offset of the hunks around it ({moved}); either could be the place"
        )
        raise locator.ambiguous(slot.hunk, slot.number, sorted([slot.start, *rivals]), hint, why)


def _refusal(locator: Locator, slots: list[_Slot], slot: _Slot) -> Exception:
    """Why a hunk with old lines has no single place between its placed neighbours."""
    hunk, n = slot.hunk, len(locator.keys)
    before, after = _neighbours(slots, slot)
    lo, hi = before.end if before else 0, after.start if after else n
    hint = slot.hinted + (before.offset if before else 0)
    starts, _ = locator.matches(hunk, lo, hi)
    if not starts:
        return locator.not_found(hunk, slot.number, hint, lo, hi)
    if not carries_text(hunk):
        why = (
            "its old lines carry no text (blank lines or punctuation only), so they place it only "
            "at its hinted line, where they are unique in the file, or where the hunks around "
            "it agree"
        )
    elif after is not None and before is not None and after.offset != before.offset:
        why = (
            f"none is at its hinted line, and the hunks around it (moved {before.offset:+d} and "
            f"{after.offset:+d}) confirm none of them"
        )
    else:
        why = "none is at its hinted line, and nothing else singles one out"
    return locator.ambiguous(hunk, slot.number, at_edge(hunk, starts, n), hint, why)

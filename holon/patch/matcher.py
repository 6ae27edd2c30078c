"""Locate a hunk's old lines in a file: the hinted line, then a window around it, then the file.

What counts as plausible: a match at the hinted line (the header's old_start,
shifted by the offset at which the previous hunk of the file applied) is used
as is. Otherwise the matches after the previous hunk within `radius` lines of
the hint (max(20, 2 x the hunk's old lines), as in the Rust original) are the
plausible ones: exactly one is used; of several, the one strictly nearest the
hint is used (the issue's rule: drift moves a hunk a few lines, and the next
copy of the same lines is further away), and a tie is `ambiguous_context`. With
none in the window, a match anywhere after the previous hunk is used if it is
the only one. Only when no exact match exists anywhere does a match that
differs in trailing whitespace count, under the same rule. A hunk that only
adds lines has nothing to match: its line number places it only at the start
or end of the file (or in an empty one); elsewhere it is `context_not_found`,
since line numbers are hints and drift would misplace it silently. Matches are
found through a line -> positions index built on first need, anchored on the
hunk's rarest line, so a correct hint costs O(hunk) and a miss O(file) once per
file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from holon.patch.errors import patch_error
from holon.patch.model import Hunk

_WINDOW = 12
_TEXT_BUDGET = 100
MIN_RADIUS = 20


def radius(hunk: Hunk) -> int:
    """How far from its hinted line a hunk's match counts as near: max(20, 2 x its old lines)."""
    return max(MIN_RADIUS, 2 * len(hunk.old_lines))


@dataclass(frozen=True)
class Placement:
    start: int  # 0-based index of the first old line (insertion point for a pure insertion)
    relaxed: bool  # matched only when trailing whitespace was ignored
    search: str = "hint"  # where it was found: "hint", "window", "file" ("line": no context)


def _index(keys: list[str]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    return index


class Locator:
    """Hunk placement in one file's lines, with lazily built indexes."""

    def __init__(self, keys: list[str], path: str) -> None:
        self.keys = keys
        self.path = path
        self._exact: dict[str, list[int]] | None = None
        self._rkeys: list[str] | None = None
        self._relaxed: dict[str, list[int]] | None = None
        self.exhaustive = False  # every match, even when the hint holds the hunk's lines

    def place(self, hunk: Hunk, number: int, hint: int, lo: int) -> Placement:
        """Where hunk `number` (1-based) applies on its own, given its hinted start and the end of
        the previous hunk: the eligible place nearest the hint; a tie is `ambiguous_context`."""
        options = [p for p in self.eligible(hunk, hint, lo) if p.search != "far"]
        if not options:
            raise self.refusal(hunk, number, hint, lo)
        ranked = sorted(options, key=lambda p: abs(p.start - hint))
        if len(ranked) > 1 and abs(ranked[0].start - hint) == abs(ranked[1].start - hint):
            tied = [p.start for p in ranked if abs(p.start - hint) == abs(ranked[0].start - hint)]
            raise self.ambiguity(hunk, number, tied, hint)
        return ranked[0]

    def eligible(self, hunk: Hunk, hint: int, lo: int) -> list[Placement]:
        """Every place hunk may go after the previous hunk's end `lo`, hinted at `hint`: each match
        within the window (only the one at the end or start of the file when the hunk's missing
        context says it lies there; only a unique one when the hunk has no context line with text),
        plus the match beyond the window when it is the only one there (`file`), or each of
        several there (`far`: usable only where the next hunk of the file confirms its offset,
        see `align`). A match at the hint is the one
        place, unless `exhaustive` (set once a hunk of the file has moved: line numbers are then
        suspect). A hunk without a context line with text goes only where it is unique near its
        hint, even when the hint holds its lines."""
        old, n = hunk.old_lines, len(self.keys)
        if not old:  # a pure insertion: only the file's edges are places a line number can name
            if hunk.at_eof or hint == n or n == 0:
                return [Placement(n, False, "line")]
            if hint == 0 and lo == 0:
                return [Placement(0, False, "line")]
            return []
        starts, relaxed = self._starts(hunk, hint, lo)
        if starts == [hint] and not self.exhaustive:
            if _has_context(hunk) and _anchored(hunk, [hint], n, strict=True):
                return [Placement(hint, relaxed, "hint")]
            starts, relaxed = self._starts(hunk, None, lo)  # the hint alone does not place it
        reach = radius(hunk)
        near = _anchored(hunk, [s for s in starts if abs(s - hint) <= reach], n)
        far = [s for s in starts if abs(s - hint) > reach]
        if len(near) > 1 and not _has_context(hunk):
            return []  # only the line number could choose
        search = "window" if len(near) == 1 else "nearest"
        out = [Placement(s, relaxed, "hint" if s == hint else search) for s in near]
        if len(far) == 1:
            out.append(Placement(far[0], relaxed, "file"))
        elif far and _has_context(hunk):  # usable only where the next hunk confirms the offset
            out += [Placement(s, relaxed, "far") for s in far]
        return out

    def _starts(self, hunk: Hunk, hint: int | None, lo: int) -> tuple[list[int], bool]:
        """The starts after `lo` where the hunk's old lines are, exactly, else ignoring trailing
        whitespace; and whether they are the relaxed ones. Just `[hint]` when the lines are at the
        hint (so a correct hint costs O(hunk)), unless `exhaustive`."""
        old, n = hunk.old_lines, len(self.keys)
        if self.exhaustive:
            hint = None

        def fits(s: int) -> bool:
            return s >= lo and s + len(old) <= n and (not hunk.at_eof or s + len(old) == n)

        starts = self._matches(self.keys, self._exact_index, old, hint, fits)
        if starts:
            return starts, False
        if self._rkeys is None:
            self._rkeys = [k.rstrip() for k in self.keys]
        rold = [t.rstrip() for t in old]
        return self._matches(self._rkeys, self._relaxed_index, rold, hint, fits), True

    def refusal(self, hunk: Hunk, number: int, hint: int, lo: int) -> Exception:
        """Why hunk `number` has no eligible place after `lo` (see `eligible`)."""
        if not hunk.old_lines:
            return self._no_context(hunk, number, hint)
        starts, _ = self._starts(hunk, hint, lo)
        if not starts:
            return self._not_found(hunk, number, hunk.old_lines, hint, lo)
        reach = radius(hunk)
        near = [s for s in starts if abs(s - hint) <= reach]
        why = None
        if len(near) > 1 and not _has_context(hunk):
            why = (
                "and the hunk has no context line with text, so only its line number could choose "
                "(line numbers are hints); add the unchanged lines around the change as ' ' lines"
            )
        return self._ambiguous(hunk, number, near or starts, hint, reach, len(starts), why)

    def unconfirmed(self, hunk: Hunk, number: int, hint: int, lo: int) -> Exception:
        """`ambiguous_context` for a hunk whose place is one of several beyond the window that the
        next hunk of the file does not confirm."""
        starts, _ = self._starts(hunk, None, lo)
        reach = radius(hunk)
        far = [s for s in starts if abs(s - hint) > reach]
        why = "and the next hunk of the file confirms none of them" if far != starts else None
        return self._ambiguous(hunk, number, far, hint, reach, len(starts), why)

    def ambiguity(self, hunk: Hunk, number: int, starts: list[int], hint: int) -> Exception:
        """`ambiguous_context` for matches of one hunk equally far from `hint`."""
        total = len(self._starts(hunk, hint, 0)[0])
        return self._ambiguous(hunk, number, starts, hint, radius(hunk), total)

    def _exact_index(self) -> dict[str, list[int]]:
        if self._exact is None:
            self._exact = _index(self.keys)
        return self._exact

    def _relaxed_index(self) -> dict[str, list[int]]:
        if self._relaxed is None:
            self._relaxed = _index(self._rkeys or [])
        return self._relaxed

    @staticmethod
    def _matches(
        keys: list[str],
        index: Callable[[], dict[str, list[int]]],
        old: list[str],
        hint: int | None,
        fits: Callable[[int], bool],
    ) -> list[int]:
        m = len(old)
        if hint is not None and fits(hint) and keys[hint : hint + m] == old:
            return [hint]
        positions = index()
        anchor = min(range(m), key=lambda j: len(positions.get(old[j], ())))
        starts = (p - anchor for p in positions.get(old[anchor], ()))
        return [s for s in starts if fits(s) and keys[s : s + m] == old]

    def _ambiguous(
        self,
        hunk: Hunk,
        number: int,
        starts: list[int],
        hint: int,
        reach: int,
        total: int,
        why: str | None = None,
    ) -> Exception:
        """`ambiguous_context`: several matches within `reach` of the hint (`starts`), or, with
        none near, several in the file."""
        shown = ", ".join(f"{s + 1} ({s - hint:+d})" for s in starts[:10])
        shown += ", ..." if len(starts) > 10 else ""
        near = abs(starts[0] - hint) <= reach
        where = (
            f"{len(starts)} places within {reach} lines of its hinted line {hint + 1}"
            if near
            else f"{len(starts)} places, none within {reach} lines of its hinted line {hint + 1}"
        )
        return patch_error(
            "ambiguous_context",
            f"{self.path}: hunk {number} ({hunk.header}) matches {where} (line (offset): {shown}) "
            + (
                why
                or (
                    "and the nearest are equally far from the hinted line"
                    if near
                    else "and none is near the hinted line"
                )
            ),
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            window=reach,
            scope="window" if near else "file",
            candidate_count=len(starts),
            matches_in_file=total,
            candidates=[{"line": s + 1, "distance": s - hint} for s in starts[:50]],
        )

    def _no_context(self, hunk: Hunk, number: int, hint: int) -> Exception:
        return patch_error(
            "context_not_found",
            f"{self.path}: hunk {number} ({hunk.header}) only adds lines and has no context: "
            f"only its line number (after line {hint}) could place it, and line numbers are "
            "hints; add the unchanged lines around the insertion as ' ' context lines (an "
            "insertion without context goes only at the start or end of a file, or into an "
            "empty one)",
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            reason="insertion_without_context",
        )

    def _not_found(self, hunk: Hunk, number: int, old: list[str], hint: int, lo: int) -> Exception:
        best, votes = self._nearest(old, hint)
        n = len(self.keys)
        diverged = next(
            (
                j
                for j in range(len(old))
                if not (0 <= best + j < n and self.keys[best + j] == old[j])
            ),
            None,
        )
        if diverged is None:  # the text is there, but where this hunk may not go
            why = (
                (
                    "it lies before the end of the previous hunk (hunks must be in file order and "
                    "must not overlap)"
                )
                if best < lo
                else "a '\\ No newline at end of file' marker pins it to the end of the file"
            )
            detail = f"its lines match at line {best + 1}, but {why}"
            divergence = None
        else:
            found = self.keys[best + diverged] if 0 <= best + diverged < n else None
            detail = (
                f"nearest similar text at line {best + 1} ({votes} of {len(old)} lines equal), "
                f"first difference at line {best + diverged + 1}: expected "
                f"{_clip(old[diverged])!r}, found {_clip(found)!r}"
            )
            divergence = {
                "hunk_line": diverged + 1,
                "line": best + diverged + 1,
                "expected": _clip(old[diverged]),
                "found": _clip(found),
            }
        window = range(max(0, best - 2), min(n, best + len(old) + 2))
        return patch_error(
            "context_not_found",
            f"{self.path}: hunk {number} ({hunk.header}): context not found; {detail}",
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            first_divergence=divergence,
            nearest_lines=[
                {"line": i + 1, "text": _clip(self.keys[i])} for i in list(window)[:_WINDOW]
            ],
        )

    def _nearest(self, old: list[str], hint: int) -> tuple[int, int]:
        """The start whose lines agree (ignoring surrounding whitespace) with most old lines,
        nearest the hint."""
        stripped: dict[str, list[int]] = {}
        for i, key in enumerate(self.keys):
            stripped.setdefault(key.strip(), []).append(i)
        votes: Counter[int] = Counter()
        for j, text in enumerate(old):
            positions = stripped.get(text.strip(), []) if text.strip() else []
            if len(positions) <= 500:
                votes.update(p - j for p in positions)
        if not votes:
            return min(max(hint, 0), max(len(self.keys) - 1, 0)), 0
        best = max(votes, key=lambda s: (votes[s], -abs(s - hint)))
        exact = sum(
            1
            for j, t in enumerate(old)
            if 0 <= best + j < len(self.keys) and self.keys[best + j] == t
        )
        return best, exact


def _has_context(hunk: Hunk) -> bool:
    """Does the hunk carry a context line with text? Without one (a -U0 hunk, or context of blank
    lines only) nothing but its line number says where it goes when its lines recur nearby."""
    return any(line.tag == " " and line.text.strip() for line in hunk.lines)


def _anchored(hunk: Hunk, starts: list[int], n: int, strict: bool = False) -> list[int]:
    """Of the matches near the hint, the one at the end of the file when the hunk has leading
    context but none after its last change (a diff cuts trailing context only at the end of the
    file), and likewise the one at the start when it has trailing context but none before and its
    header names line 1; all of them when there is no such match (none, if `strict`)."""
    tags = [line.tag for line in hunk.lines]
    leading = next((i for i, t in enumerate(tags) if t != " "), len(tags))
    trailing = next((i for i, t in enumerate(reversed(tags)) if t != " "), len(tags))
    if leading == len(tags) or (leading == 0) == (trailing == 0):
        return starts
    if leading == 0 and hunk.old_start > 1:  # as git: the start only for a hunk that names it
        return starts
    size = len(hunk.old_lines)
    edge = [s for s in starts if s + size == n] if trailing == 0 else [s for s in starts if s == 0]
    return edge or ([] if strict else starts)


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_BUDGET:
        return text
    return text[:_TEXT_BUDGET] + "..."

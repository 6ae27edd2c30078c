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

    def place(self, hunk: Hunk, number: int, hint: int, lo: int) -> Placement:
        """Where hunk `number` (1-based) applies, given its hinted start and the end of the previous
        hunk."""
        old, n = hunk.old_lines, len(self.keys)
        if not old:  # a pure insertion: only the file's edges are places a line number can name
            if hunk.at_eof or hint == n or n == 0:
                return Placement(n, False, "line")
            if hint == 0 and lo == 0:
                return Placement(0, False, "line")
            raise self._no_context(hunk, number, hint)

        def fits(s: int) -> bool:
            return s >= lo and s + len(old) <= n and (not hunk.at_eof or s + len(old) == n)

        starts = self._matches(self.keys, self._exact_index, old, hint, fits)
        relaxed = False
        if not starts:
            if self._rkeys is None:
                self._rkeys = [k.rstrip() for k in self.keys]
            starts = self._matches(
                self._rkeys, self._relaxed_index, [t.rstrip() for t in old], hint, fits
            )
            relaxed = True
        if starts == [hint]:
            return Placement(hint, relaxed, "hint")
        reach = radius(hunk)
        near = [s for s in starts if abs(s - hint) <= reach]
        if len(near) == 1:
            return Placement(near[0], relaxed, "window")
        if near:  # the nearest to the hint wins when it is strictly nearer than every other
            first, second = sorted(near, key=lambda s: abs(s - hint))[:2]
            if abs(first - hint) < abs(second - hint):
                return Placement(first, relaxed, "nearest")
            raise self._ambiguous(hunk, number, near, hint, reach, len(starts))
        if len(starts) == 1:
            return Placement(starts[0], relaxed, "file")
        if starts:
            raise self._ambiguous(hunk, number, starts, hint, reach, len(starts))
        raise self._not_found(hunk, number, old, hint, lo)

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
        hint: int,
        fits: Callable[[int], bool],
    ) -> list[int]:
        m = len(old)
        if fits(hint) and keys[hint : hint + m] == old:
            return [hint]
        positions = index()
        anchor = min(range(m), key=lambda j: len(positions.get(old[j], ())))
        starts = (p - anchor for p in positions.get(old[anchor], ()))
        return [s for s in starts if fits(s) and keys[s : s + m] == old]

    def _ambiguous(
        self, hunk: Hunk, number: int, starts: list[int], hint: int, reach: int, total: int
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
                "and the nearest are equally far from the hinted line"
                if near
                else "and none is near the hinted line"
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


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_BUDGET:
        return text
    return text[:_TEXT_BUDGET] + "..."

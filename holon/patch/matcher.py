"""Find where a hunk's old lines are in a file, and say precisely why a hunk has no single place.

A hunk's old lines are its context and removed lines: the text the file must
contain where it applies. `Locator` finds every start of them in a range of the
file (exactly, else ignoring trailing whitespace, reported as relaxed), counts
them in the whole file, and builds the refusals: `context_not_found` with the
nearest similar text, `ambiguous_context` with every candidate line, its
distance from the hint and the true number of matches. Which match is the place
is decided over all of a file's hunks in `align`. Matches are found through a
line -> positions index built on first need, anchored on the hunk's rarest
line, so a correct hint costs O(hunk) and a search O(file) once per file.
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
SHOWN = 10  # candidates named in a message (details carry up to LISTED)
LISTED = 50


def radius(hunk: Hunk) -> int:
    """How far from its hinted line a hunk's match counts as near: max(20, 2 x its old lines)."""
    return max(MIN_RADIUS, 2 * len(hunk.old_lines))


def has_text(line: str) -> bool:
    """Does a line say anything? Blank lines and lone braces, brackets or punctuation recur all
    over a file, so they never place a hunk on their own."""
    return any(ch.isalnum() for ch in line)


def carries_text(hunk: Hunk) -> bool:
    """Has the hunk an old line (context or removed) with text?"""
    return any(has_text(line) for line in hunk.old_lines)


@dataclass(frozen=True)
class Placement:
    start: int  # 0-based index of the first old line (insertion point for a pure insertion)
    relaxed: bool  # matched only when trailing whitespace was ignored
    # the evidence: "hint" (at the header's line, moved by the neighbouring hunks' offset),
    # "window" (the one match near the hint), "file" (the one match in the file),
    # "between" (the one match that leaves the other hunks room in file order), "line" (an
    # insertion without context: its line number)
    search: str = "hint"


def _index(keys: list[str]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    return index


class Locator:
    """Matches of hunks in one file's lines, with lazily built indexes."""

    def __init__(self, keys: list[str], path: str) -> None:
        self.keys = keys
        self.path = path
        self._exact: dict[str, list[int]] | None = None
        self._rkeys: list[str] | None = None
        self._relaxed: dict[str, list[int]] | None = None

    def at(self, hunk: Hunk, start: int) -> bool | None:
        """Whether the hunk's old lines are at `start`: None if not, else whether only relaxed."""
        old, n = hunk.old_lines, len(self.keys)
        if start < 0 or start + len(old) > n or (hunk.at_eof and start + len(old) != n):
            return None
        if self.keys[start : start + len(old)] == old:
            return False
        rkeys = self._relaxed_keys()
        return True if rkeys[start : start + len(old)] == [t.rstrip() for t in old] else None

    def matches(self, hunk: Hunk, lo: int = 0, hi: int | None = None) -> tuple[list[int], bool]:
        """Every start in [lo, hi] (hi: the line the hunk must end by) of the hunk's old lines:
        the exact ones, else those equal ignoring trailing whitespace; and whether relaxed."""
        old, n = hunk.old_lines, len(self.keys)
        end = n if hi is None else min(hi, n)

        def fits(s: int) -> bool:
            return s >= lo and s + len(old) <= end and (not hunk.at_eof or s + len(old) == n)

        starts = self._matches(self.keys, self._exact_index, old, fits)
        if starts:
            return starts, False
        rold = [t.rstrip() for t in old]
        return self._matches(self._relaxed_keys(), self._relaxed_index, rold, fits), True

    def count(self, hunk: Hunk) -> int:
        """How many places in the whole file hold the hunk's old lines."""
        return len(self.matches(hunk)[0])

    def _relaxed_keys(self) -> list[str]:
        if self._rkeys is None:
            self._rkeys = [k.rstrip() for k in self.keys]
        return self._rkeys

    def _exact_index(self) -> dict[str, list[int]]:
        if self._exact is None:
            self._exact = _index(self.keys)
        return self._exact

    def _relaxed_index(self) -> dict[str, list[int]]:
        if self._relaxed is None:
            self._relaxed = _index(self._relaxed_keys())
        return self._relaxed

    @staticmethod
    def _matches(
        keys: list[str],
        index: Callable[[], dict[str, list[int]]],
        old: list[str],
        fits: Callable[[int], bool],
    ) -> list[int]:
        m = len(old)
        positions = index()
        anchor = min(range(m), key=lambda j: len(positions.get(old[j], ())))
        starts = (p - anchor for p in positions.get(old[anchor], ()))
        return [s for s in starts if fits(s) and keys[s : s + m] == old]

    def ambiguous(
        self, hunk: Hunk, number: int, starts: list[int], hint: int, why: str
    ) -> Exception:
        """`ambiguous_context`: the hunk's old lines are at each of `starts` (the places it may
        go), and `why` none of them is singled out."""
        total = self.count(hunk)
        shown = ", ".join(f"{s + 1} ({s - hint:+d})" for s in starts[:SHOWN])
        shown += f", ... ({len(starts) - SHOWN} more)" if len(starts) > SHOWN else ""
        lines = f"{len(hunk.old_lines)} old line{'s' if len(hunk.old_lines) != 1 else ''}"
        where = f"{total} place{'s' if total != 1 else ''} in the file"
        if len(starts) != total:
            where += f", {len(starts)} of them where it may go"
        return patch_error(
            "ambiguous_context",
            f"{self.path}: hunk {number} ({hunk.header}): its context and removed lines ({lines}) "
            f"match {where} (line (distance from the hinted line {hint + 1}): {shown}), and "
            f"{why}; add more unchanged lines above and below the change as ' ' context lines, "
            "until the hunk's lines occur only once near it",
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            window=radius(hunk),
            candidate_count=len(starts),
            matches_in_file=total,
            candidates=[{"line": s + 1, "distance": s - hint} for s in starts[:LISTED]],
        )

    def insertion_refused(self, hunk: Hunk, number: int, hint: int, why: str) -> Exception:
        """`context_not_found` for a hunk that only adds lines and whose line number is not
        trustworthy (`why`)."""
        return patch_error(
            "context_not_found",
            f"{self.path}: hunk {number} ({hunk.header}) only adds lines and has no context, so "
            f"only its line number (after line {hint}) could place it, and {why}; add 2 or 3 "
            "unchanged lines above and below the insertion as ' ' context lines",
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            reason="insertion_without_context",
        )

    def not_found(self, hunk: Hunk, number: int, hint: int, lo: int, hi: int) -> Exception:
        """`context_not_found`: no place in [lo, hi] holds the hunk's old lines."""
        old = hunk.old_lines
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
            if best < lo:
                why = (
                    "it lies before the end of the previous hunk (hunks must be in file order and "
                    "must not overlap)"
                )
            elif best + len(old) > hi:
                why = "it lies after the start of the next hunk (hunks must be in file order)"
            else:
                why = "a '\\ No newline at end of file' marker pins it to the end of the file"
            total = self.count(hunk)
            detail = (
                f"its lines match {total} place{'s' if total != 1 else ''} in the file, the "
                f"nearest at line {best + 1}, but {why}"
            )
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
            matches_in_file=self.count(hunk),
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


def cut_short(hunk: Hunk) -> str | None:
    """ "end" for a hunk with context before its changes but none after, "start" for the
    reverse, else None."""
    tags = [line.tag for line in hunk.lines]
    leading = next((i for i, t in enumerate(tags) if t != " "), len(tags))
    trailing = next((i for i, t in enumerate(reversed(tags)) if t != " "), len(tags))
    if leading == len(tags) or (leading == 0) == (trailing == 0):
        return None
    return "end" if trailing == 0 else "start"


def at_edge(hunk: Hunk, starts: list[int], n: int) -> list[int]:
    """Of a hunk's matches, the one at the end of the file when the hunk has leading context but
    none after its last change (a diff cuts trailing context only at the end of the file), and
    likewise the one at the start when it has trailing context but none before and its header
    names line 1; all of them when there is no such match."""
    side = cut_short(hunk)
    if side is None or (side == "start" and hunk.old_start > 1):
        return starts  # as git: the start only for a hunk that names it
    size = len(hunk.old_lines)
    edge = [s for s in starts if s + size == n] if side == "end" else [s for s in starts if s == 0]
    return edge or starts


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_BUDGET:
        return text
    return text[:_TEXT_BUDGET] + "..."

"""Locate a hunk's old lines in a file: the hinted line first, then the whole file.

What counts as plausible: a match at the hinted line (the header's old_start,
shifted by the offset at which the previous hunk of the file applied) is used
as is. Otherwise every match after the previous hunk is equally plausible:
exactly one is used, several are `ambiguous_context`. Only when no exact match
exists anywhere does a match that differs in trailing whitespace count, under
the same rule. Matches are found through a line -> positions index built on
first need, anchored on the hunk's rarest line, so a correct hint costs
O(hunk) and a miss O(file) once per file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from holon.patch.errors import patch_error
from holon.patch.model import Hunk

_WINDOW = 12
_TEXT_BUDGET = 100


@dataclass(frozen=True)
class Placement:
    start: int  # 0-based index of the first old line (insertion point for a pure insertion)
    relaxed: bool  # matched only when trailing whitespace was ignored


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
        if not old:  # a pure insertion has no context: its line number is all there is
            return Placement(n if hunk.at_eof else min(max(hint, lo), n), False)

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
        if len(starts) == 1:
            return Placement(starts[0], relaxed)
        if starts:
            raise self._ambiguous(hunk, number, starts, hint)
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

    def _ambiguous(self, hunk: Hunk, number: int, starts: list[int], hint: int) -> Exception:
        lines = ", ".join(str(s + 1) for s in starts[:10]) + (", ..." if len(starts) > 10 else "")
        return patch_error(
            "ambiguous_context",
            f"{self.path}: hunk {number} ({hunk.header}) matches {len(starts)} places (lines "
            f"{lines}) and its hinted line {hint + 1} is not one of them",
            path=self.path,
            hunk=number,
            hint_line=hint + 1,
            candidate_count=len(starts),
            candidates=[{"line": s + 1, "distance": s - hint} for s in starts[:50]],
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

"""Hunk placement: the hinted line, else a unique match; ambiguity; whitespace-relaxed matches."""

from __future__ import annotations

import pytest

from holon.patch.errors import PatchError
from holon.patch.matcher import Locator, Placement
from holon.patch.model import BodyLine, Hunk


def hunk(old, new=(), *, start=1, old_no_newline=False):
    lines = [BodyLine("-", t) for t in old] + [BodyLine("+", t) for t in new]
    return Hunk(start, len(old), start, len(new), "", lines, 1, old_no_newline=old_no_newline)


def ctx_hunk(context, *, start=1):
    return Hunk(
        start, len(context), start, len(context), "", [BodyLine(" ", t) for t in context], 1
    )


KEYS = [f"line {i}" for i in range(1, 21)]


def place(keys, h, hint, lo=0, path="f.txt"):
    return Locator(keys, path).place(h, 1, hint, lo)


def test_hinted_line_is_used_without_building_an_index():
    loc = Locator(KEYS, "f.txt")
    assert loc.place(hunk(["line 5", "line 6"]), 1, 4, 0) == Placement(4, False)
    assert loc._exact is None and loc._relaxed is None


def test_unique_match_elsewhere_is_used():
    assert place(KEYS, hunk(["line 15", "line 16"]), 2) == Placement(14, False)


def test_duplicates_hint_picks_one():
    keys = ["x", "same", "end", "y", "same", "end"]
    assert place(keys, hunk(["same", "end"]), 4) == Placement(4, False)
    assert place(keys, hunk(["same", "end"]), 1) == Placement(1, False)


def test_duplicates_without_a_matching_hint_are_ambiguous():
    keys = ["same", "end"] * 3
    with pytest.raises(PatchError) as info:
        Locator(keys, "f.txt").place(hunk(["same", "end"]), 3, 1, 0)
    err = info.value
    assert err.kind == "ambiguous_context"
    assert err.details == {
        "path": "f.txt",
        "hunk": 3,
        "hint_line": 2,
        "candidate_count": 3,
        "candidates": [
            {"line": 1, "distance": -1},
            {"line": 3, "distance": 1},
            {"line": 5, "distance": 3},
        ],
    }
    assert "matches 3 places (lines 1, 3, 5)" in err.message
    assert "hinted line 2 is not one of them" in err.message


def test_many_candidates_are_elided_in_the_message():
    keys = ["a"] * 60
    with pytest.raises(PatchError) as info:
        place(keys, hunk(["a"]), 200)
    assert "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)" in info.value.message
    assert len(info.value.details["candidates"]) == 50
    assert info.value.details["candidate_count"] == 60


def test_lower_bound_excludes_earlier_matches():
    keys = ["same", "x", "same", "y"]
    assert place(keys, hunk(["same"]), 0, lo=1) == Placement(2, False)  # the hint is before lo


def test_whitespace_relaxed_match_only_when_no_exact_match():
    keys = ["a  ", "b\t", "c"]
    assert place(keys, ctx_hunk(["a", "b"]), 0) == Placement(0, True)
    keys = ["a  ", "b", "x", "a", "b"]
    assert place(keys, ctx_hunk(["a", "b"]), 0) == Placement(3, False)  # exact beats the hint


def test_relaxed_ambiguity():
    keys = ["a ", "z", "a\t", "z"]
    with pytest.raises(PatchError) as info:
        place(keys, ctx_hunk(["a"]), 1)
    assert info.value.kind == "ambiguous_context"


def test_leading_whitespace_is_never_relaxed():
    with pytest.raises(PatchError) as info:
        place(["  a", "b"], ctx_hunk(["a", "b"]), 0)
    assert info.value.kind == "context_not_found"


def test_not_found_reports_nearest_text_and_first_divergence():
    with pytest.raises(PatchError) as info:
        Locator(KEYS, "f.txt").place(hunk(["line 11", "line twelve", "line 13"]), 2, 10, 0)
    err = info.value
    assert err.kind == "context_not_found"
    assert err.details["first_divergence"] == {
        "hunk_line": 2,
        "line": 12,
        "expected": "line twelve",
        "found": "line 12",
    }
    assert err.details["hint_line"] == 11 and err.details["hunk"] == 2
    assert [n["line"] for n in err.details["nearest_lines"]] == list(range(9, 16))
    assert "nearest similar text at line 11 (2 of 3 lines equal)" in err.message


def test_not_found_when_text_lies_before_the_previous_hunk():
    with pytest.raises(PatchError) as info:
        place(KEYS, hunk(["line 3"]), 2, lo=10)
    assert "first_divergence" not in info.value.details  # None-valued details are dropped
    assert "before the end of the previous hunk" in info.value.message


def test_no_newline_marker_pins_the_hunk_to_the_end():
    keys = ["a", "b", "a"]
    assert place(keys, hunk(["a"], old_no_newline=True), 0) == Placement(2, False)
    with pytest.raises(PatchError) as info:
        place(["a", "b"], hunk(["a"], old_no_newline=True), 0)
    assert "pins it to the end of the file" in info.value.message


def test_nothing_similar_falls_back_to_the_hint():
    with pytest.raises(PatchError) as info:
        place(KEYS, hunk(["zzz"]), 5)
    assert info.value.details["first_divergence"]["line"] == 6
    assert "(0 of 1 lines equal)" in info.value.message


def test_long_lines_are_clipped_in_details():
    long = "x" * 300
    with pytest.raises(PatchError) as info:
        place([long], hunk([long + "y"]), 0)
    div = info.value.details["first_divergence"]
    assert div["expected"] == "x" * 100 + "..." and div["found"] == "x" * 100 + "..."


@pytest.mark.parametrize(
    "hint,lo,at_eof,expected",
    [(3, 0, False, 3), (1, 2, False, 2), (99, 0, False, 5), (0, 0, True, 5)],
)
def test_pure_insertion_uses_its_line_number(hint, lo, at_eof, expected):
    h = Hunk(hint, 0, hint + 1, 1, "", [BodyLine("+", "new")], 1, new_no_newline=at_eof)
    assert place(["a", "b", "c", "d", "e"], h, hint, lo) == Placement(expected, False)


def test_empty_file():
    with pytest.raises(PatchError) as info:
        place([], hunk(["a"]), 0)
    assert info.value.kind == "context_not_found" and info.value.details["nearest_lines"] == []

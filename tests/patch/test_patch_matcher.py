"""Hunk placement: the hinted line, else a unique match near it, else a unique match in the file;
ambiguity; whitespace-relaxed matches."""

from __future__ import annotations

import pytest

from holon.patch.errors import PatchError
from holon.patch.matcher import Locator, Placement, radius
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
    assert loc.place(ctx_hunk(["line 5", "line 6"]), 1, 4, 0) == Placement(4, False)
    assert loc._exact is None and loc._relaxed is None


def test_a_hunk_without_context_lines_is_placed_only_where_it_is_unique_near_its_hint():
    keys = ["a", "", "b", "", "c"] + filler(40)
    loc = Locator(keys, "f.txt")
    with pytest.raises(PatchError) as info:
        loc.place(hunk([""]), 1, 0, 0)  # blank lines 1 and 3 lines from the hint
    assert info.value.kind == "ambiguous_context"
    assert "no context line with text" in info.value.message
    assert info.value.details["candidates"] == [
        {"line": 2, "distance": 1},
        {"line": 4, "distance": 3},
    ]
    with pytest.raises(PatchError):
        loc.place(hunk([""]), 1, 1, 0)  # even at the hint: the blank line recurs near it
    with pytest.raises(PatchError):
        loc.place(ctx_hunk([""]), 1, 1, 0)  # blank context says no more
    assert loc.place(hunk(["b"]), 1, 4, 0) == Placement(2, False, "window")  # unique
    assert loc.place(hunk(["a"]), 1, 0, 0) == Placement(0, False, "hint")
    assert loc.place(ctx_hunk(["b"]), 1, 2, 0) == Placement(2, False)


def test_a_hunk_cut_short_at_one_end_prefers_that_end_of_the_file():
    """A diff drops trailing context only at the end of the file (and leading only at its start),
    so of several matches near the hint, the one at that end is the place."""
    keys = filler(10) + ["x", "y"] + filler(2, "g") + ["x"]
    end = Hunk(11, 1, 11, 2, "", [BodyLine(" ", "x"), BodyLine("+", "new")], 1)
    assert place(keys, end, 11) == Placement(14, False, "window")  # not x at 10, nearer
    assert place(keys, end, 10) == Placement(14, False, "window")  # not even at its hint
    start_keys = ["x", "y"] + filler(3) + ["x", "y"] + filler(20, "g")
    start = Hunk(1, 1, 1, 2, "", [BodyLine("+", "new"), BodyLine(" ", "x")], 1)
    assert place(start_keys, start, 3) == Placement(0, False, "window")
    named_later = Hunk(4, 1, 4, 2, "", [BodyLine("+", "new"), BodyLine(" ", "x")], 1)
    assert place(start_keys, named_later, 3) == Placement(5, False, "nearest")  # not line 1
    both = Hunk(1, 1, 1, 2, "", [BodyLine(" ", "x"), BodyLine("-", "y")], 1)
    assert place(start_keys, both, 4) == Placement(5, False, "nearest")  # no edge: nearest wins


def test_unique_match_elsewhere_is_used():
    assert place(KEYS, hunk(["line 15", "line 16"]), 2) == Placement(14, False, "window")


def test_duplicates_hint_picks_one():
    keys = ["x", "same", "end", "y", "same", "end"]
    assert place(keys, ctx_hunk(["same", "end"]), 4) == Placement(4, False)
    assert place(keys, ctx_hunk(["same", "end"]), 1) == Placement(1, False)


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
        "window": 20,
        "scope": "window",
        "candidate_count": 3,
        "matches_in_file": 3,
        "candidates": [
            {"line": 1, "distance": -1},
            {"line": 3, "distance": 1},
            {"line": 5, "distance": 3},
        ],
    }
    assert "matches 3 places within 20 lines of its hinted line 2" in err.message
    assert "(line (offset): 1 (-1), 3 (+1), 5 (+3))" in err.message


def test_many_candidates_are_elided_in_the_message():
    keys = ["a"] * 60
    with pytest.raises(PatchError) as info:
        place(keys, hunk(["a"]), 200)
    assert "1 (-200), 2 (-199)," in info.value.message
    assert "10 (-191), ...)" in info.value.message
    assert "none within 20 lines of its hinted line 201" in info.value.message
    assert len(info.value.details["candidates"]) == 50
    assert info.value.details["candidate_count"] == 60
    assert info.value.details["scope"] == "file"


def test_lower_bound_excludes_earlier_matches():
    keys = ["same", "x", "same", "y"]
    assert place(keys, hunk(["same"]), 0, lo=1) == Placement(2, False, "window")  # hint < lo


def test_whitespace_relaxed_match_only_when_no_exact_match():
    keys = ["a  ", "b\t", "c"]
    assert place(keys, ctx_hunk(["a", "b"]), 0) == Placement(0, True)
    keys = ["a  ", "b", "x", "a", "b"]
    exact = Placement(3, False, "window")
    assert place(keys, ctx_hunk(["a", "b"]), 0) == exact  # exact beats the hint


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
    assert place(keys, hunk(["a"], old_no_newline=True), 0) == Placement(2, False, "window")
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
    [(5, 0, False, 5), (0, 0, False, 0), (0, 0, True, 5), (3, 0, True, 5), (5, 2, False, 5)],
)
def test_pure_insertion_goes_to_an_edge_of_the_file(hint, lo, at_eof, expected):
    h = Hunk(hint, 0, hint + 1, 1, "", [BodyLine("+", "new")], 1, new_no_newline=at_eof)
    assert place(["a", "b", "c", "d", "e"], h, hint, lo) == Placement(expected, False, "line")
    assert place([], h, hint, 0) == Placement(0, False, "line")  # an empty file has one place


@pytest.mark.parametrize("hint,lo", [(3, 0), (1, 0), (0, 2), (99, 0)])
def test_pure_insertion_inside_the_file_is_refused(hint, lo):
    h = Hunk(hint, 0, hint + 1, 1, "", [BodyLine("+", "new")], 1)
    with pytest.raises(PatchError) as info:
        place(["a", "b", "c", "d", "e"], h, hint, lo)
    assert info.value.kind == "context_not_found"
    assert info.value.details["reason"] == "insertion_without_context"


def test_empty_file():
    with pytest.raises(PatchError) as info:
        place([], hunk(["a"]), 0)
    assert info.value.kind == "context_not_found" and info.value.details["nearest_lines"] == []


def filler(n, tag="f"):
    return [f"{tag} {i}" for i in range(n)]


def test_radius_is_twenty_or_twice_the_hunk():
    assert radius(hunk(["a"])) == 20 and radius(hunk(["a"] * 10)) == 20
    assert radius(hunk(["a"] * 11)) == 22 and radius(ctx_hunk(["a"] * 40)) == 80


def test_small_drift_applies_at_the_match_in_the_window_despite_one_further_away():
    # the true place is 3 lines below the hint; the same text recurs 30 lines further down
    keys = filler(10) + ["x", "y"] + filler(30, "g") + ["x", "y"] + filler(5, "h")
    assert place(keys, hunk(["x", "y"]), 7) == Placement(10, False, "window")
    assert place(keys, hunk(["x", "y"]), 13) == Placement(10, False, "window")  # drift of -3


def test_two_matches_at_equal_distance_are_ambiguous_with_distances():
    keys = filler(5) + ["x"] + filler(5, "g") + ["x"] + filler(5, "h")
    with pytest.raises(PatchError) as info:
        place(keys, hunk(["x"]), 8)
    err = info.value
    assert err.kind == "ambiguous_context"
    assert err.details["candidates"] == [{"line": 6, "distance": -3}, {"line": 12, "distance": 3}]
    assert err.details["scope"] == "window" and err.details["candidate_count"] == 2
    assert "6 (-3), 12 (+3)" in err.message


def test_the_strictly_nearest_match_in_the_window_wins_and_a_tie_is_ambiguous():
    keys = filler(5) + ["x"] + filler(9, "g") + ["x"] + filler(5, "h")
    assert place(keys, ctx_hunk(["x"]), 4) == Placement(5, False, "nearest")
    assert place(keys, ctx_hunk(["x"]), 14) == Placement(15, False, "nearest")
    with pytest.raises(PatchError) as info:
        place(keys, ctx_hunk(["x"]), 10)  # 5 lines from each
    assert info.value.kind == "ambiguous_context"
    assert info.value.details["candidates"] == [
        {"line": 6, "distance": -5},
        {"line": 16, "distance": 5},
    ]


def test_match_outside_the_window_applies_when_unique_in_the_file():
    keys = filler(100) + ["x", "y"] + filler(10, "g")
    assert place(keys, hunk(["x", "y"]), 10) == Placement(100, False, "file")
    assert place(keys, hunk(["x", "y"]), 79) == Placement(100, False, "file")  # 21 > 20
    assert place(keys, hunk(["x", "y"]), 80) == Placement(100, False, "window")


def test_several_matches_outside_the_window_are_ambiguous():
    keys = filler(50) + ["x"] + filler(50, "g") + ["x"]
    with pytest.raises(PatchError) as info:
        place(keys, hunk(["x"]), 0)
    err = info.value
    assert err.details["scope"] == "file" and err.details["matches_in_file"] == 2
    assert "none within 20 lines of its hinted line 1" in err.message


def test_a_long_hunk_has_a_wider_window():
    body = [f"b {i}" for i in range(15)]  # radius 30
    keys = filler(40) + body + filler(100, "g") + body
    assert place(keys, ctx_hunk(body), 12) == Placement(40, False, "window")
    with pytest.raises(PatchError) as info:
        place(keys, ctx_hunk(body), 5)  # 35 lines off: outside the window, two in the file
    assert info.value.details["scope"] == "file"


def test_window_excludes_matches_before_the_previous_hunk():
    keys = ["x"] + filler(3) + ["x"] + filler(40, "g") + ["x"]
    assert place(keys, hunk(["x"]), 2, lo=1) == Placement(4, False, "window")


def test_relaxed_matches_follow_the_window_rule():
    keys = filler(5) + ["x  "] + filler(40, "g") + ["x\t"]
    assert place(keys, ctx_hunk(["x"]), 3) == Placement(5, True, "window")
    assert place(keys, ctx_hunk(["x"]), 44) == Placement(46, True, "window")
    with pytest.raises(PatchError) as info:
        place(keys + filler(31, "h") + ["x "], ctx_hunk(["x"]), 62)
    assert info.value.details["candidates"] == [
        {"line": 47, "distance": -16},
        {"line": 79, "distance": 16},
    ]
    nearer = keys + filler(30, "h") + ["x "]
    assert place(nearer, ctx_hunk(["x"]), 62) == Placement(77, True, "nearest")

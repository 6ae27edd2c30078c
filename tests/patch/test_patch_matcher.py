"""Locator: every match of a hunk's old lines in a range (exact, else ignoring trailing
whitespace), the edges a hunk cut short belongs to, lines with text, and the refusals' details."""

from __future__ import annotations

import pytest

from holon.patch.matcher import Locator, at_edge, carries_text, cut_short, has_text, radius
from holon.patch.model import BodyLine, Hunk


def hunk(old, new=(), *, start=1, old_no_newline=False):
    lines = [BodyLine("-", t) for t in old] + [BodyLine("+", t) for t in new]
    return Hunk(start, len(old), start, len(new), "", lines, 1, old_no_newline=old_no_newline)


def ctx_hunk(context, *, start=1):
    return Hunk(
        start, len(context), start, len(context), "", [BodyLine(" ", t) for t in context], 1
    )


def filler(n, tag="f"):
    return [f"{tag} {i}" for i in range(n)]


KEYS = [f"line {i}" for i in range(1, 21)]


def test_at_checks_one_place_without_building_an_index():
    loc = Locator(KEYS, "f.txt")
    assert loc.at(ctx_hunk(["line 5", "line 6"]), 4) is False  # exact
    assert loc.at(ctx_hunk(["line 5", "line 6"]), 5) is None
    assert loc.at(ctx_hunk(["line 20", "x"]), 19) is None  # past the end
    assert loc._exact is None and loc._relaxed is None
    assert Locator(["a  ", "b"], "f").at(ctx_hunk(["a", "b"]), 0) is True  # relaxed


def test_matches_lists_every_start_in_the_range():
    keys = ["same", "end", "x", "same", "end", "same", "end"]
    loc = Locator(keys, "f.txt")
    h = ctx_hunk(["same", "end"])
    assert loc.matches(h) == ([0, 3, 5], False)
    assert loc.matches(h, 1) == ([3, 5], False)
    assert loc.matches(h, 1, 6) == ([3], False)  # must end by line 6
    assert loc.count(h) == 3


def test_whitespace_relaxed_matches_only_when_no_exact_match_in_the_range():
    keys = ["a  ", "b", "x", "a", "b"]
    loc = Locator(keys, "f")
    assert loc.matches(ctx_hunk(["a", "b"])) == ([3], False)
    assert loc.matches(ctx_hunk(["a", "b"]), 0, 3) == ([0], True)
    with_tab = Locator(["  a", "b"], "f")  # leading whitespace is never relaxed
    assert with_tab.matches(ctx_hunk(["a", "b"])) == ([], True)


def test_a_no_newline_marker_pins_matches_to_the_end():
    loc = Locator(["a", "b", "a"], "f")
    assert loc.matches(hunk(["a"], old_no_newline=True)) == ([2], False)
    assert loc.at(hunk(["a"], old_no_newline=True), 0) is None


@pytest.mark.parametrize(
    "line,text",
    [("", False), ("   ", False), ("}", False), ("    });", False), ("*/", False), ("]", False)]
    + [("x", True), ("    return", True), ("else:", True), ("# 1", True)],
)
def test_lines_without_letters_or_digits_carry_no_text(line, text):
    assert has_text(line) is text


def test_a_hunk_carries_text_through_its_context_or_removed_lines_not_added_ones():
    assert not carries_text(hunk(["", "}"], ["new text"]))
    assert carries_text(hunk(["    x = 1"]))
    assert carries_text(ctx_hunk(["", "def f():"]))
    assert not carries_text(hunk([], ["added"]))


def test_a_hunk_cut_short_at_one_end_belongs_to_that_end_of_the_file():
    end = Hunk(11, 1, 11, 2, "", [BodyLine(" ", "x"), BodyLine("+", "new")], 1)
    start = Hunk(1, 1, 1, 2, "", [BodyLine("+", "new"), BodyLine(" ", "x")], 1)
    later = Hunk(4, 1, 4, 2, "", [BodyLine("+", "new"), BodyLine(" ", "x")], 1)
    both = Hunk(1, 3, 1, 2, "", [BodyLine(" ", "x"), BodyLine("-", "y"), BodyLine(" ", "z")], 1)
    assert (cut_short(end), cut_short(start), cut_short(both)) == ("end", "start", None)
    assert cut_short(hunk(["a"], ["b"])) is None  # -U0: no context either side
    assert at_edge(end, [3, 9], 10) == [9] and at_edge(end, [3, 5], 10) == [3, 5]
    assert at_edge(start, [0, 5], 10) == [0]
    assert at_edge(later, [0, 5], 10) == [0, 5]  # as git: only a hunk whose header names line 1


def test_radius_is_twenty_or_twice_the_hunk():
    assert radius(hunk(["a"])) == 20 and radius(hunk(["a"] * 10)) == 20
    assert radius(hunk(["a"] * 11)) == 22 and radius(ctx_hunk(["a"] * 40)) == 80


def test_ambiguity_names_every_candidate_with_its_distance_and_the_true_count():
    keys = ["same", "end"] * 3
    err = Locator(keys, "f.txt").ambiguous(
        hunk(["same", "end"]), 3, [2, 4], 1, "nothing singles one out"
    )
    assert err.kind == "ambiguous_context"
    assert err.details == {
        "path": "f.txt",
        "hunk": 3,
        "hint_line": 2,
        "window": 20,
        "candidate_count": 2,
        "matches_in_file": 3,
        "candidates": [{"line": 3, "distance": 1}, {"line": 5, "distance": 3}],
    }
    assert "match 3 places in the file, 2 of them where it may go" in err.message
    assert "(line (distance from the hinted line 2): 3 (+1), 5 (+3))" in err.message
    assert "add more unchanged lines" in err.message and "equally far" not in err.message


def test_many_candidates_are_elided_in_the_message_and_bounded_in_the_details():
    keys = ["a"] * 60
    err = Locator(keys, "f").ambiguous(hunk(["a"]), 1, list(range(60)), 200, "why")
    assert "1 (-200), 2 (-199)," in err.message and "10 (-191), ... (50 more))" in err.message
    assert len(err.details["candidates"]) == 50
    assert err.details["candidate_count"] == 60 and err.details["matches_in_file"] == 60


def test_not_found_reports_nearest_text_and_first_divergence():
    err = Locator(KEYS, "f.txt").not_found(
        hunk(["line 11", "line twelve", "line 13"]), 2, 10, 0, 20
    )
    assert err.kind == "context_not_found"
    assert err.details["first_divergence"] == {
        "hunk_line": 2,
        "line": 12,
        "expected": "line twelve",
        "found": "line 12",
    }
    assert err.details["hint_line"] == 11 and err.details["hunk"] == 2
    assert err.details["matches_in_file"] == 0
    assert [n["line"] for n in err.details["nearest_lines"]] == list(range(9, 16))
    assert "nearest similar text at line 11 (2 of 3 lines equal)" in err.message


@pytest.mark.parametrize(
    "lo,hi,why",
    [(10, 20, "before the end of the previous hunk"), (0, 2, "after the start of the next hunk")],
)
def test_not_found_when_the_text_lies_outside_the_neighbouring_hunks(lo, hi, why):
    err = Locator(KEYS, "f").not_found(hunk(["line 3"]), 2, 2, lo, hi)
    assert "first_divergence" not in err.details  # None-valued details are dropped
    assert why in err.message and err.details["matches_in_file"] == 1
    assert "its lines match 1 place in the file, the nearest at line 3" in err.message


def test_not_found_explains_a_no_newline_marker():
    err = Locator(["a", "b"], "f").not_found(hunk(["a"], old_no_newline=True), 1, 0, 0, 2)
    assert "pins it to the end of the file" in err.message


def test_nothing_similar_falls_back_to_the_hint():
    err = Locator(KEYS, "f").not_found(hunk(["zzz"]), 1, 5, 0, 20)
    assert err.details["first_divergence"]["line"] == 6
    assert "(0 of 1 lines equal)" in err.message


def test_long_lines_are_clipped_in_details():
    long = "x" * 300
    err = Locator([long], "f").not_found(hunk([long + "y"]), 1, 0, 0, 1)
    div = err.details["first_divergence"]
    assert div["expected"] == "x" * 100 + "..." and div["found"] == "x" * 100 + "..."


def test_an_insertion_refusal_says_why_and_what_to_add():
    err = Locator(KEYS, "f").insertion_refused(hunk([], ["new"], start=4), 2, 4, "because")
    assert err.kind == "context_not_found" and err.details["reason"] == "insertion_without_context"
    assert "after line 4" in err.message and "because" in err.message
    assert "' ' context lines" in err.message

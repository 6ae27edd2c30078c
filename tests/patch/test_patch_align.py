"""Placing a file's hunks by evidence: at the hint, the one match near it, the one match in the
file, or where the neighbouring hunks confirm; otherwise a refusal that names every candidate.
Nothing is placed by nearness alone, and lines without text never place a hunk on their own."""

from __future__ import annotations

import pytest

from holon.patch.align import place_all
from holon.patch.apply import apply_hunks
from holon.patch.errors import PatchError
from holon.patch.matcher import Locator
from holon.patch.parser import parse_patch
from holon.patch.textfile import decode


def lines(*parts: list[str]) -> list[str]:
    return [x for part in parts for x in part]


def filler(n: int, tag: str) -> list[str]:
    return [f"{tag} {i}" for i in range(n)]


def apply(keys: list[str], body: str) -> tuple[list[str], list[dict]]:
    [patch] = parse_patch("--- a/f\n+++ b/f\n" + body)
    out, diags = apply_hunks(decode("".join(k + "\n" for k in keys).encode(), "f"), patch, "f")
    return out.decode().splitlines(), diags


def refused(keys: list[str], body: str) -> PatchError:
    with pytest.raises(PatchError) as info:
        apply(keys, body)
    return info.value


def searches(diags: list[dict]) -> list[tuple[int, str, int]]:
    return [(d["hunk"], d["search"], d["offset"]) for d in diags if d["kind"] == "hunk_offset"]


def test_a_match_at_the_headers_line_is_used_even_with_copies_near():
    keys = lines(filler(5, "a"), ["x", "y"], filler(3, "b"), ["x", "y"], filler(5, "c"))
    out, diags = apply(keys, "@@ -11,2 +11,2 @@\n x\n-y\n+Y\n")
    assert out[10:12] == ["x", "Y"] and out[5:7] == ["x", "y"] and diags == []


def test_a_hunk_without_text_applies_exactly_at_its_line_number():
    """A pristine -U1 diff whose hunk has only blank context: the blank pair recurs all over the
    file, but the one at the header's line is the place (main refused this)."""
    keys = lines(["a", "", "", "b", "", "", "c", "", "", "d"])
    out, diags = apply(keys, "@@ -5,2 +5,3 @@\n \n+new\n \n")
    assert out == ["a", "", "", "b", "", "new", "", "c", "", "", "d"] and diags == []


def test_the_one_match_near_the_hint_is_used_and_reported():
    keys = lines(filler(10, "a"), ["x", "y"], filler(40, "b"))
    out, diags = apply(keys, "@@ -8,2 +8,2 @@\n x\n-y\n+Y\n")  # 3 lines off
    assert out[10:12] == ["x", "Y"] and out.count("Y") == 1
    assert searches(diags) == [(1, "window", 3)]
    assert "match once within 20 lines of line 8" in diags[0]["message"]


@pytest.mark.parametrize("gap", [48, 100])
def test_the_one_match_near_the_hint_with_another_further_off_is_refused(gap):
    """A header 50 lines off puts a copy 15 lines below the hint and the true place 35 (or 87)
    above it: the window's one match is no evidence while another lies anywhere in the file."""
    keys = lines(filler(10, "a"), ["x", "y"], filler(gap, "b"), ["x", "y"], filler(120, "c"))
    copy = 12 + gap
    err = refused(keys, f"@@ -{copy - 14},2 +{copy - 14},2 @@\n x\n-y\n+Y\n")
    assert err.kind == "ambiguous_context" and err.details["matches_in_file"] == 2
    assert [c["distance"] for c in err.details["candidates"]] == [13 - gap, 15]


def test_the_one_match_in_the_file_is_used_beyond_the_window():
    keys = lines(filler(100, "a"), ["x", "y"], filler(10, "b"))
    out, diags = apply(keys, "@@ -3,2 +3,2 @@\n x\n-y\n+Y\n")
    assert out[100:102] == ["x", "Y"] and searches(diags) == [(1, "file", 98)]


def test_two_matches_near_the_hint_are_ambiguous_however_near_one_is():
    """The fifth misapplication on main: matches 6 and 10 lines from the hint, nothing confirms
    either, and nearest-wins took the wrong one."""
    keys = lines(filler(16, "a"), ["x", "y"], filler(2, "b"), ["x", "y"], filler(20, "c"))
    err = refused(keys, "@@ -11,2 +11,2 @@\n x\n-y\n+Y\n")
    assert err.kind == "ambiguous_context"
    assert err.details["candidates"] == [
        {"line": 17, "distance": 6},
        {"line": 21, "distance": 10},
    ]
    assert err.details["matches_in_file"] == 2 and err.details["candidate_count"] == 2
    assert "match 2 places in the file" in err.message and "17 (+6), 21 (+10)" in err.message
    assert "nothing else singles one out" in err.message
    assert "add more unchanged lines above and below the change" in err.message


def test_a_hunk_without_text_is_not_placed_by_the_one_copy_near_a_wrong_line_number():
    """Four of main's misapplications: -U1 hunks whose context is blank lines, 10-50 lines off,
    placed at the one blank pair within 20 lines although the file has many."""
    block = ["def f():", "    pass", "", ""]
    keys = lines(block * 3, ["x = 1"] * 30, block * 3)
    err = refused(keys, "@@ -50,2 +50,3 @@\n \n+# new\n \n")  # 17 lines below the nearest pair
    assert err.kind == "ambiguous_context" and err.details["matches_in_file"] == 6
    assert "carry no text" in err.message
    assert [c["line"] for c in err.details["candidates"]] == [3, 7, 11, 45, 49, 53]


def test_a_hunk_without_text_is_placed_where_it_is_unique_in_the_file():
    keys = lines(filler(40, "a"), ["", "}"], filler(40, "b"))
    out, diags = apply(keys, "@@ -3,2 +3,3 @@\n \n+// new\n }\n")
    assert out[40:43] == ["", "// new", "}"] and searches(diags) == [(1, "file", 38)]


def _around(gap_offset: int):
    """Hunk 2 has only blank context; hunks 1 and 3 have text and are 4 lines down, and 4 or
    `gap_offset` more lines lie between hunk 2 and hunk 3."""
    keys = lines(filler(4, "pad"), ["def a():", "    one"], ["", ""], filler(3, "m"))
    keys += lines(["", ""], filler(3, "n"), ["", ""], filler(gap_offset, "gap"))
    keys += lines(["def b():", "    two"], filler(5, "z"))
    body = (
        "@@ -1,2 +1,2 @@\n def a():\n-    one\n+    ONE\n"
        "@@ -8,2 +8,3 @@\n \n+# new\n \n"
        "@@ -15,2 +16,2 @@\n def b():\n-    two\n+    TWO\n"
    )
    return keys, body


def test_a_hunk_without_text_is_placed_where_both_neighbours_agree():
    keys, body = _around(0)
    out, diags = apply(keys, body)
    assert out[11:14] == ["", "# new", ""] and out[5] == "    ONE" and "    TWO" in out
    assert searches(diags) == [(1, "window", 4), (2, "hint", 4), (3, "window", 4)]


def test_a_hunk_without_text_is_refused_where_its_neighbours_disagree():
    keys, body = _around(3)  # lines were added between hunks 2 and 3: which blank pair moved?
    err = refused(keys, body)
    assert err.kind == "ambiguous_context" and err.details["hunk"] == 2
    assert "carry no text" in err.message


def test_a_match_at_the_next_hunks_offset_alone_confirms_nothing():
    """Hunk 1's lines are 5 and 9 lines below its hint; hunk 2 is 9 lines below its header. Lines
    may have been inserted between the hunks as well as above: 9 is no proof (a copy at the next
    hunk's offset misapplied a real flask diff)."""
    keys = lines(filler(5, "a"), ["x", "y"], filler(2, "b"), ["x", "y"], filler(4, "c"))
    keys += lines(["p", "q"], filler(30, "d"))
    err = refused(keys, "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n@@ -7,2 +7,2 @@\n p\n-q\n+Q\n")
    assert err.kind == "ambiguous_context" and err.details["hunk"] == 1
    assert [c["distance"] for c in err.details["candidates"]] == [5, 9]


def test_the_one_match_between_the_neighbours_is_used():
    """Hunk 2's lines are 3 and 13 lines below its hint, both near: hunk 3, found 2 lines below
    its header, leaves one of them between hunks 1 and 3."""
    keys = lines(["p", "q"], filler(3, "a"), ["x", "y"], filler(3, "b"), ["r", "s"])
    keys += lines(filler(3, "c"), ["x", "y"], filler(20, "d"))
    body = "@@ -1,2 +1,2 @@\n p\n-q\n+Q\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n@@ -9,2 +9,2 @@\n r\n-s\n+S\n"
    out, diags = apply(keys, body)
    assert out[5:7] == ["x", "Y"] and out[15:17] == ["x", "y"]
    assert searches(diags) == [(2, "between", 3), (3, "window", 2)]


@pytest.mark.parametrize("copy_at", [5, 10])
def test_a_copy_near_the_hint_against_the_offset_the_next_hunk_has_is_refused(copy_at):
    """53 lines were inserted above both hunks, and a copy of hunk 1's lines lies 5 lines above its
    hint, or at it: the copy, or the offset hunk 2 has? Nothing says: refused."""
    block = ["    return x", "", "def g():"]
    keys = lines(filler(copy_at, "a"), block, filler(60 - copy_at, "pad"), block, filler(5, "c"))
    body = "@@ -11,3 +11,3 @@\n     return x\n-\n+# gap\n def g():\n"
    body += "@@ -17,2 +17,2 @@\n c 3\n-c 4\n+C 4\n"
    err = refused(keys, body)
    assert err.kind == "ambiguous_context" and err.details["hunk"] == 1
    assert [c["line"] for c in err.details["candidates"]] == [copy_at + 1, 64]
    if copy_at == 10:  # at its hint, but hunk 2 moved: contested
        assert "at the offset of the hunks around it (hunk 2 +53)" in err.message


def test_removed_lines_are_evidence_for_a_hunk_without_context():
    keys = lines(filler(20, "a"), ["old call()"], filler(20, "b"))
    out, diags = apply(keys, "@@ -18 +18 @@\n-old call()\n+new call()\n")  # -U0, 3 lines off
    assert out[20] == "new call()" and searches(diags) == [(1, "window", 3)]
    twice = lines(filler(14, "a"), ["old call()"], filler(5, "x"), ["old call()"], filler(9, "b"))
    err = refused(twice, "@@ -18 +18 @@\n-old call()\n+new call()\n")
    assert err.kind == "ambiguous_context"  # two copies: the line number alone cannot choose


def test_a_removed_blank_line_off_its_line_number_is_refused():
    keys = lines(filler(5, "a"), [""], filler(5, "b"), [""], filler(5, "c"))
    assert apply(keys, "@@ -6 +5,0 @@\n-\n")[0] == lines(
        filler(5, "a"), filler(5, "b"), [""], filler(5, "c")
    )
    assert refused(keys, "@@ -8 +7,0 @@\n-\n").kind == "ambiguous_context"


ZERO = lines(filler(10, "a"), ["old"], filler(10, "b"), ["older"], filler(10, "c"))


def test_an_insertion_without_context_goes_at_its_line_number_when_nothing_moved():
    out, diags = apply(ZERO, "@@ -5,0 +6 @@\n+new\n")
    assert out[5] == "new" and out[4] == "a 4" and diags == []
    out, _ = apply(ZERO, "@@ -0,0 +1 @@\n+top\n")
    assert out[0] == "top"
    out, _ = apply(ZERO, "@@ -32,0 +33 @@\n+end\n")
    assert out[-1] == "end"


def test_an_insertion_between_hunks_that_moved_alike_goes_at_their_offset():
    keys = lines(["x", "y", "z"], ZERO)  # 3 lines above everything
    body = "@@ -11 +11 @@\n-old\n+new\n@@ -16,0 +17 @@\n+inserted\n@@ -22 +23 @@\n-older\n+newer\n"
    out, _ = apply(keys, body)
    assert out[13] == "new" and out[19] == "inserted" and out[18] == "b 4" and "newer" in out


def test_an_insertion_between_hunks_that_moved_differently_is_refused():
    keys = lines(ZERO[:15], ["x", "y"], ZERO[15:])  # 2 lines between the hunks
    body = "@@ -11 +11 @@\n-old\n+new\n@@ -16,0 +17 @@\n+inserted\n@@ -22 +23 @@\n-older\n+newer\n"
    err = refused(keys, body)
    assert err.kind == "context_not_found" and err.details["reason"] == "insertion_without_context"
    assert err.details["hunk"] == 2
    assert "the hunks around it moved (hunk 1 +0, hunk 3 +2)" in err.message


def test_an_insertion_after_a_hunk_that_moved_is_refused():
    keys = lines(["x"], ZERO)
    err = refused(keys, "@@ -11 +11 @@\n-old\n+new\n@@ -16,0 +17 @@\n+inserted\n")
    assert err.details["reason"] == "insertion_without_context"
    assert "hunk 1 +1" in err.message


def test_an_insertion_beyond_the_end_of_the_file_is_refused():
    err = refused(ZERO, "@@ -40,0 +41 @@\n+new\n")
    assert "the file has only 32 lines" in err.message


def test_no_hunks_place_nothing():
    assert place_all(Locator(["a"], "f"), []) == []


def test_a_hunk_with_no_place_reports_the_nearest_text():
    keys = lines(["x", "y"], filler(30, "f"))
    err = refused(
        keys, "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n@@ -10,2 +10,2 @@\n nowhere\n-to be\n+found\n"
    )
    assert err.kind == "context_not_found" and err.details["hunk"] == 2


def test_a_relaxed_match_is_used_only_without_an_exact_one():
    keys = lines(filler(5, "a"), ["x  "], filler(40, "g"))
    out, diags = apply(keys, "@@ -4 +4 @@\n-x\n+X\n")
    assert out[5] == "X" and [d["kind"] for d in diags] == [
        "whitespace_relaxed_match",
        "hunk_offset",
    ]
    assert refused(["x "] + keys, "@@ -4 +4 @@\n-x\n+X\n").kind == "ambiguous_context"


def test_a_patch_that_fits_exactly_at_its_line_numbers_applies_there():
    """A pristine diff whose first hunk has only blank context and whose second recurs nearby:
    neither has evidence of its own, but every hunk sits exactly at its header's line."""
    keys = lines(["a", "", "", "b", "", ""], ["x", "y", "z", "x", "y"], filler(5, "c"))
    body = "@@ -2,2 +2,3 @@\n \n+new\n \n@@ -10,2 +11,2 @@\n x\n-y\n+Y\n"
    out, diags = apply(keys, body)
    assert out[:5] == ["a", "", "new", "", "b"] and out[10:12] == ["x", "Y"] and diags == []


def test_hunks_whose_only_places_are_out_of_order_are_refused_as_such():
    """Hunk 1's lines are only after hunk 2's (which is unique): hunk 1 has no place in order."""
    keys = lines(
        ["x", "y"], filler(30, "a"), ["p", "q"], filler(10, "b"), ["p", "q"], filler(9, "c")
    )
    body = "@@ -1,2 +1,2 @@\n p\n-q\n+Q\n@@ -30,2 +30,2 @@\n x\n-y\n+Y\n"
    err = refused(keys, body)
    assert err.kind == "context_not_found" and err.details["hunk"] == 1
    assert err.details["matches_in_file"] == 2
    assert (
        "2 places in the file, the nearest at line 33, but it lies after the start of the next"
        in (err.message)
    )


def test_a_match_at_a_moved_hint_with_a_copy_a_few_lines_off_is_refused():
    """Hunk 1 moved 3 lines, so hunk 2's hint is 3 lines down, where its lines are; but they are
    also 2 lines further: lines inserted between the hunks would put the place there."""
    keys = lines(filler(3, "pre"), ["a", "b"], filler(10, "m"), ["x", "y", "x", "y"])
    keys += filler(20, "e")
    body = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -13,2 +13,2 @@\n x\n-y\n+Y\n"
    err = refused(keys, body)
    assert err.kind == "ambiguous_context" and err.details["hunk"] == 2
    assert err.details["candidates"] == [{"line": 16, "distance": 0}, {"line": 18, "distance": 2}]

"""Placing a file's hunks together: the placement whose offsets change least wins, a wrong copy
near one hunk's hint loses to the offset the other hunks agree on, and a tie is ambiguous."""

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


BLOCK = ["    return x", "", "def g():"]
PATCH = (
    "@@ -11,3 +11,3 @@\n     return x\n-\n+# gap\n def g():\n@@ -17,2 +17,2 @@\n c 3\n-c 4\n+C 4\n"
)


@pytest.mark.parametrize("copy_at", [5, 10])
def test_a_copy_near_the_first_hint_loses_to_the_offset_the_next_hunk_needs(copy_at):
    """53 lines were inserted above both hunks, and a copy of hunk 1's lines lies 5 lines above its
    hint (or at it): hunk 1 alone would take the copy; with hunk 2 found 53 lines down, the place
    53 lines down makes the offsets agree (0 + 53 against 5 + 58)."""
    keys = lines(filler(copy_at, "a"), BLOCK, filler(60 - copy_at, "pad"), BLOCK, filler(5, "c"))
    if copy_at == 10:  # at the hint: 0 + 53 against 53 + 0, a tie, so nothing is chosen
        with pytest.raises(PatchError) as info:
            apply(keys, PATCH)
        assert [c["distance"] for c in info.value.details["candidates"]] == [0, 53]
        return
    out, diags = apply(keys, PATCH)
    assert out.index("# gap") == 64 and "# gap" not in out[:63] and "C 4" in out
    first = diags[0]
    assert first["search"] == "patch" and first["offset"] == 53
    assert "other hunks further from their headers" in first["message"]


def test_when_the_other_hunks_cannot_tell_the_placements_apart_the_patch_is_refused():
    """A copy 20 lines below the hint and the true place 60 lines below: offsets 0 -> 20 -> 60
    and 0 -> 60 -> 60 move the hunks equally far, so neither is chosen."""
    keys = lines(filler(10, "a"), filler(20, "x"), BLOCK, filler(37, "pad"), BLOCK, filler(7, "c"))
    body = PATCH
    with pytest.raises(PatchError) as info:
        apply(keys, body)
    err = info.value
    assert err.kind == "ambiguous_context" and err.details["scope"] == "patch"
    assert [c["distance"] for c in err.details["candidates"]] == [20, 60]
    assert "equally far from their headers" in err.message


def test_the_nearest_copy_loses_when_the_next_hunk_agrees_with_a_further_one():
    keys = lines(
        ["x", "y"], filler(3, "d1"), ["x", "y"], filler(4, "d2"), ["p", "q"], filler(30, "e")
    )
    # hunk 1 is hinted at line 3: "x y" is 2 lines above (line 1) and 3 below (line 6); hunk 2 is
    # 3 lines below its header: offsets -2 -> +3 cost 7, +3 -> +3 cost 3
    body = "@@ -3,2 +3,2 @@\n x\n-y\n+Y\n@@ -9,2 +9,2 @@\n p\n-q\n+Q\n"
    out, diags = apply(keys, body)
    assert out[:2] == ["x", "y"] and out[5:7] == ["x", "Y"] and "Q" in out
    assert [(d["hunk"], d["search"], d["offset"]) for d in diags] == [
        (1, "patch", 3),
        (2, "hint", 3),
    ]


def test_a_match_at_the_hint_is_no_proof_when_a_later_hunk_moved():
    """Hunk 1 matches at its hint and 5 lines below; hunk 2 is 5 lines below its header. Lines
    inserted between the hunks (0 -> 5) or above both (5 -> 5) explain it equally: refused."""
    keys = lines(
        ["x", "y"], filler(3, "d1"), ["x", "y"], filler(4, "d2"), ["p", "q"], filler(30, "e")
    )
    body = "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n@@ -6,2 +6,2 @@\n p\n-q\n+Q\n"
    with pytest.raises(PatchError) as info:
        apply(keys, body)
    assert info.value.details["scope"] == "patch" and info.value.details["hunk"] == 1
    # with hunk 2 at its header too, the match at the hint stands
    out, diags = apply(keys, "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n@@ -12,2 +12,2 @@\n p\n-q\n+Q\n")
    assert out[:2] == ["x", "Y"] and diags == []


def test_a_single_hunk_keeps_the_nearest_rule():
    keys = lines(filler(5, "f"), ["x"], filler(9, "g"), ["x"], filler(5, "h"))
    [patch] = parse_patch("--- a/f\n+++ b/f\n@@ -5,1 +5,2 @@\n x\n+new\n")
    [p] = place_all(Locator(keys, "f"), patch.hunks)
    assert (p.start, p.search) == (5, "nearest")


def test_a_hunk_with_no_place_reports_why_from_the_best_placement_before_it():
    keys = lines(["x", "y"], filler(30, "f"))
    body = "@@ -1,2 +1,2 @@\n x\n-y\n+Y\n@@ -10,2 +10,2 @@\n nowhere\n-to be\n+found\n"
    with pytest.raises(PatchError) as info:
        apply(keys, body)
    assert info.value.kind == "context_not_found" and info.value.details["hunk"] == 2


def test_no_hunks_place_nothing():
    assert place_all(Locator(["a"], "f"), []) == []


def test_one_of_several_far_copies_is_used_only_where_the_next_hunk_confirms_it():
    """Hunk 1's lines sit 1 line above its hint (a copy) and 51 and 81 lines below; hunk 2 is 51
    lines below its header: 51 is confirmed (cost 51 against 1 + 52), and the copies lose.
    Without hunk 2, the one near copy is the nearest place; with no near copy, two far ones are
    ambiguous."""
    near_copy = lines(filler(9, "a"), BLOCK, filler(49, "p"), BLOCK, filler(27, "q"), BLOCK)
    keys = lines(near_copy, filler(10, "c"))
    two_hunks = PATCH.replace("@@ -17,2 +17,2 @@", "@@ -47,2 +47,2 @@")
    out, diags = apply(keys, two_hunks)  # "c 3" is at index 97: its header's 46, moved by 51
    assert out[62] == "# gap" and out.count("# gap") == 1
    assert (diags[0]["search"], diags[0]["offset"]) == ("patch", 51)
    out, _ = apply(keys, PATCH.split("@@ -17")[0])
    assert out[10] == "# gap"  # alone, the near copy is the nearest place
    far_only = lines(filler(62, "a"), BLOCK, filler(27, "q"), BLOCK, filler(10, "c"))
    with pytest.raises(PatchError) as info:
        apply(far_only, PATCH.split("@@ -17")[0])
    assert info.value.details["scope"] == "file"

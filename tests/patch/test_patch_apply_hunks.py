"""apply_hunks in memory: placement drift, advisory counts, line endings and the final newline."""

from __future__ import annotations

import pytest

from holon.patch.apply import EMPTY, apply_hunks, diagnostic
from holon.patch.errors import PatchError
from holon.patch.parser import parse_patch
from holon.patch.textfile import decode


def run(data: bytes, body: str):
    [patch] = parse_patch("--- a/f\n+++ b/f\n" + body)
    return apply_hunks(decode(data, "f"), patch, "f")


LINES = b"".join(b"l%d\n" % i for i in range(1, 31))


def test_diagnostic_shape():
    assert diagnostic("k", "p", 2, "m") == {"kind": "k", "path": "p", "hunk": 2, "message": "m"}


def test_exact_apply_has_no_diagnostics():
    out, diags = run(b"a\nb\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert out == b"a\nB\nc\n" and diags == []


def test_offset_is_reported_and_carried_to_later_hunks():
    out, diags = run(LINES, "@@ -2,2 +2,2 @@\n l5\n-l6\n+L6\n@@ -12,1 +12,1 @@\n-l15\n+L15\n")
    assert b"L6\n" in out and b"L15\n" in out and out.count(b"\n") == 30
    assert [(d["kind"], d["hunk"]) for d in diags] == [("hunk_offset", 1), ("hunk_offset", 2)]
    assert "+3 lines from its header" in diags[0]["message"]
    assert "applied at line 15" in diags[1]["message"]


def test_negative_offset():
    _, [diag] = run(LINES, "@@ -20 +20 @@\n-l10\n+X\n")
    assert "-10 lines from its header" in diag["message"]


def test_count_mismatch_and_relaxed_match_are_diagnostics():
    out, diags = run(b"a \nb\n", "@@ -1,5 +1,5 @@\n a\n-b\n+B\n")
    assert out == b"a \nB\n"
    assert [d["kind"] for d in diags] == ["hunk_count_mismatch", "whitespace_relaxed_match"]
    assert diags[0]["message"] == (
        "hunk 1: header @@ -1,5 +1,5 @@ but the body has 2 old and 2 new lines; applied by its body"
    )


def test_hunks_may_not_overlap():
    with pytest.raises(PatchError) as info:
        run(b"a\nb\nc\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n")
    assert info.value.kind == "context_not_found" and info.value.details["hunk"] == 2


def test_pure_insertions_go_only_at_the_edges_of_the_file():
    out, diags = run(b"a\nb\n", "@@ -2,0 +3 @@\n+after b\n")
    assert out == b"a\nb\nafter b\n" and diags == []
    out, _ = run(b"a\nb\n", "@@ -0,0 +1 @@\n+first\n")
    assert out == b"first\na\nb\n"
    out, _ = run(b"a\nb", "@@ -2,0 +3 @@\n+c\n\\ No newline at end of file\n")
    assert out == b"a\nb\nc"


def test_pure_insertion_goes_at_its_line_number_when_nothing_says_otherwise():
    """A pristine -U0 insertion: nothing moved, so its line number is the place."""
    out, diags = run(b"a\nb\nc\n", "@@ -2,0 +3 @@\n+after b\n")
    assert out == b"a\nb\nafter b\nc\n" and diags == []


def test_pure_insertion_after_a_moved_hunk_is_refused():
    """Lines were added above the first hunk: how many above the insertion, nothing says."""
    with pytest.raises(PatchError) as info:
        run(b"new\na\nb\nc\nd\n", "@@ -1 +1 @@\n-a\n+A\n@@ -2,0 +3 @@\n+after b\n")
    err = info.value
    assert err.kind == "context_not_found"
    assert err.details == {
        "path": "f",
        "hunk": 2,
        "hint_line": 4,
        "reason": "insertion_without_context",
    }
    assert "only adds lines and has no context" in err.message
    body = "@@ -1 +1 @@\n-a\n+A\n@@ -2,0 +3 @@\n b\n+after b\n c\n"
    out, _ = run(b"new\na\nb\nc\nd\n", body)  # with context it applies
    assert out == b"new\nA\nb\nafter b\nc\nd\n"


def test_add_to_empty_file_and_to_nothing():
    [patch] = parse_patch("--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n")
    assert apply_hunks(EMPTY, patch, "n") == (b"x\ny\n", [])
    assert EMPTY.lines == [] and EMPTY.final_newline and not EMPTY.crlf


def test_crlf_file_gets_crlf_added_lines_and_keeps_context_bytes():
    out, _ = run(b"a\r\nb\r\nc\n", "@@ -1,2 +1,3 @@\n a\n+new\n b\n")
    assert out == b"a\r\nnew\r\nb\r\nc\n"


def test_lf_file_with_literal_crlf_diff():
    out, _ = run(b"a\nb\n", "@@ -1,2 +1,3 @@\n a\r\n+x\r\n+y\n b\n")
    assert out == b"a\nx\r\ny\nb\n"


@pytest.mark.parametrize(
    "data,body,expected",
    [
        (b"a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", b"a\nb\n"),
        (b"a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n", b"a\nc"),
        (b"a\nb", "@@ -1 +1 @@\n-a\n+A\n", b"A\nb"),  # a hunk away from the end keeps the state
        (b"a\r\nb", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", b"a\r\nb\r\nc"),
        (b"a\r\nb\r\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n", b"a\r\nc"),
    ],
)
def test_final_newline_state(data, body, expected):
    assert run(data, body)[0] == expected


def test_deleting_every_line():
    assert run(b"a\nb\n", "@@ -1,2 +0,0 @@\n-a\n-b\n")[0] == b""


def test_undecodable_input_is_refused_before_applying():
    with pytest.raises(PatchError) as info:
        decode(b"\xff\xfe", "f")
    assert info.value.kind == "unsupported_encoding" and "byte offset 0" in info.value.message

"""The line reader, hunk parsing (counts are advisory) and the patch model's derived properties."""

from __future__ import annotations

import pytest

from holon.patch.errors import PatchError
from holon.patch.hunks import HUNK_RE, read_hunk, read_hunks
from holon.patch.model import BodyLine, FilePatch, Hunk
from holon.patch.reader import Reader, is_blank, split_patch


@pytest.mark.parametrize(
    "text,lines",
    [
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),  # a missing final newline is tolerated
        ("a\r\nb\r\n", ["a", "b"]),  # CR LF on every line: the transport's
        ("a\r\nb\n", ["a\r", "b"]),  # CR on some lines only: content
        ("a\rb\fc\n", ["a\rb\fc"]),  # only LF separates lines
        ("\n\n", ["", ""]),
        ("", []),
    ],
)
def test_split_patch(text, lines):
    assert split_patch(text) == lines


def test_reader_cursor():
    r = Reader(["", "  ", "--- a/x", "+++ b/x", "@@ -1 +1 @@"])
    assert (r.done, r.line_no, r.peek(), r.has(4), r.has(5)) == (False, 1, "", True, False)
    assert r.peek(9) == "" and r.next_nonblank() == 2 and r.at_file_header(2)
    assert not r.at_file_header() and not r.at_file_header(3)
    r.skip_blank()
    assert (r.pos, r.line_no) == (2, 3) and r.at_file_header()
    assert r.next() == "--- a/x" and r.line_no == 4
    r.pos = 5
    assert r.done and r.next_nonblank() == 0
    assert Reader(["diff --git a/x b/x"]).at_file_header()
    assert not Reader(["--- a/x", "+ not a header"]).at_file_header()
    assert is_blank(" \t\r") and not is_blank(" x")


@pytest.mark.parametrize(
    "header,groups",
    [
        ("@@ -1,3 +1,4 @@", ("1", "3", "1", "4", "")),
        ("@@ -5 +6 @@ def f():", ("5", None, "6", None, " def f():")),
        ("@@ -0,0 +1 @@", ("0", "0", "1", None, "")),
    ],
)
def test_hunk_header_regex(header, groups):
    assert HUNK_RE.match(header).groups() == groups


@pytest.mark.parametrize(
    "header", ["@@ -1,3 +1,4", "@@ -a +1 @@", "@@ 1,3 1,4 @@", "@@@ -1 +1 @@@"]
)
def test_bad_hunk_headers(header):
    with pytest.raises(PatchError) as info:
        read_hunk(Reader([header, " x"]), "f.txt")
    assert info.value.kind == "invalid_hunk_header"
    assert info.value.details == {"path": "f.txt", "line": 1}


def test_counts_default_to_one_and_section_is_stripped():
    h = read_hunk(Reader(["@@ -7 +8 @@   def main():  ", "-a", "+b"]), "f")
    assert (h.old_start, h.old_count, h.new_start, h.new_count) == (7, 1, 8, 1)
    assert h.section == "def main():" and h.line_no == 1
    assert h.header == "@@ -7,1 +8,1 @@"


def test_body_lines_tags_and_crlf():
    h = read_hunk(Reader(["@@ -1,3 +1,3 @@", " ctx\r", "-old", "+new\r", "", "x"]), "f")
    assert h.lines == [
        BodyLine(" ", "ctx", True),
        BodyLine("-", "old"),
        BodyLine("+", "new", True),
        BodyLine(" ", ""),
    ]
    assert h.old_lines == ["ctx", "old", ""] and h.new_count_actual == 3


def test_undercounted_hunk_keeps_following_body_lines():
    r = Reader(["@@ -1 +1 @@", "-a", "+b", " c", "", " d", "--- a/g", "+++ b/g"])
    h = read_hunk(r, "f")
    assert [line.text for line in h.lines] == ["a", "b", "c", "", "d"]
    assert r.peek() == "--- a/g"


def test_overcounted_hunk_stops_at_next_hunk_and_drops_blank_separators():
    r = Reader(["@@ -1,5 +1,5 @@", "-a", "+b", "", "", "@@ -9 +9 @@", "-y", "+z"])
    hunks = read_hunks(r, "f")
    assert [len(h.lines) for h in hunks] == [2, 2] and r.done


def test_a_hunk_whose_counts_are_one_long_ends_at_the_next_file_header():
    """Counts one long on both sides expect one more '-' and '+' line: a `--- a/g`, `+++ b/g`
    pair naming one file, followed by a hunk, is the next file patch (as `--recount` reads it);
    lines naming two different paths stay body lines."""
    r = Reader(["@@ -1,2 +1,2 @@", "-a", "+b", "--- a/g", "+++ b/g", "@@ -1 +1 @@", "-x", "+y"])
    [h] = read_hunks(r, "f")
    assert [line.text for line in h.lines] == ["a", "b"] and r.peek() == "--- a/g"
    r = Reader(["@@ -1,2 +1,2 @@", "-a", "+b", "--- x", "+++ y", "@@ -5 +5 @@", "-x", "+y"])
    hunks = read_hunks(r, "f")
    assert [line.text for line in hunks[0].lines] == ["a", "b", "-- x", "++ y"]


def test_a_one_space_line_after_an_undercounted_body_is_blank_context():
    """Wrong counts say nothing about where the hunk ends: ' ' is how a diff writes a blank
    context line, so it stays in the hunk (at the end of the patch or before the next hunk);
    after a body that matches its counts exactly it is a separator, as before."""
    for after in ([], ["@@ -9 +9 @@", "-y", "+z"]):
        hunks = read_hunks(Reader(["@@ -1 +1 @@", " }", "+x", " ", *after]), "f")
        assert [line.tag + line.text for line in hunks[0].lines] == [" }", "+x", " "]
        assert len(hunks) == 1 + bool(after)
    [h] = read_hunks(Reader(["@@ -1 +1,2 @@", " }", "+x", " "]), "f")
    assert [line.tag + line.text for line in h.lines] == [" }", "+x"]


def test_blank_lines_after_a_complete_hunk_end_it():
    r = Reader(["@@ -1 +1 @@", "-a", "+b", "", "", "junk"])
    [h] = read_hunks(r, "f")
    assert len(h.lines) == 2 and r.peek() == ""


def test_no_newline_markers():
    h = read_hunk(Reader(["@@ -1 +1 @@", "-a", "\\ No newline at end of file", "+b"]), "f")
    assert (h.old_no_newline, h.new_no_newline, h.at_eof) == (True, False, True)
    h = read_hunk(Reader(["@@ -1 +1 @@", " a", "\\ No newline at end of file"]), "f")
    assert (h.old_no_newline, h.new_no_newline) == (True, True)
    with pytest.raises(PatchError) as info:
        read_hunk(Reader(["@@ -1 +1 @@", "\\ No newline at end of file", "-a"]), "f")
    assert info.value.kind == "invalid_hunk_line" and info.value.details["line"] == 2


def test_invalid_and_empty_hunks():
    with pytest.raises(PatchError) as info:
        read_hunk(Reader(["@@ -1,2 +1,2 @@", " a", "?b"]), "f")
    assert info.value.kind == "invalid_hunk_line" and info.value.details["line"] == 3
    assert "'?b'" in info.value.message
    with pytest.raises(PatchError) as info:
        read_hunk(Reader(["@@ -1 +1 @@", "diff --git a/x b/x"]), "f")
    assert "no body lines" in info.value.message


def test_read_hunks_skips_blank_lines_between_hunks_and_stops_at_anything_else():
    r = Reader(["", "@@ -1 +1 @@", "-a", "+b", "", "@@ -5 +5 @@", "-c", "+d", "", "trailer"])
    assert [h.old_start for h in read_hunks(r, "f")] == [1, 5]
    assert read_hunks(Reader(["not a hunk"]), "f") == []


def hunk(lines, **kw):
    return Hunk(1, 1, 1, 1, "", [BodyLine(t, s) for t, s in lines], 1, **kw)


def test_model_properties():
    h = hunk([(" ", "a"), ("-", "b"), ("+", "c"), ("+", "d")])
    assert h.old_lines == ["a", "b"] and h.new_count_actual == 3 and not h.at_eof
    assert hunk([("+", "x")], new_no_newline=True).at_eof
    add = FilePatch("add", None, "n.txt", [h], 1)
    delete = FilePatch("delete", "d.txt", None, [h], 1)
    rename = FilePatch("rename", "o.txt", "n.txt", [], 1)
    modify = FilePatch("modify", "m.txt", "m.txt", [h], 1)
    assert [p.path for p in (add, delete, rename, modify)] == ["n.txt", "d.txt", "n.txt", "m.txt"]
    assert add.touched == ["n.txt"] and rename.touched == ["o.txt", "n.txt"]
    assert not modify.literal_eol and not rename.literal_eol
    crlf = FilePatch("modify", "m", "m", [Hunk(1, 1, 1, 1, "", [BodyLine("+", "x", True)], 1)], 1)
    assert crlf.literal_eol and modify.ignored_metadata == []
    assert FilePatch("modify", None, None, [], 1).path == ""

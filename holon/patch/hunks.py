"""Hunk parsing: `@@ -a,b +c,d @@` headers and body lines, with counts read as advisory.

Counts decide where a hunk ends only while they are consistent: a hunk whose
header undercounts keeps the body lines that follow it, and one that
overcounts ends at the next hunk header or file header. Blank lines after a
complete hunk separate patches unless more body lines follow them.
"""

from __future__ import annotations

import re

from holon.patch.errors import patch_error
from holon.patch.model import BodyLine, Hunk
from holon.patch.reader import Reader, is_blank

HUNK_RE = re.compile(r"^@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@(.*)$")


def read_hunks(r: Reader, path: str) -> list[Hunk]:
    """Every hunk that follows a file header (blank lines between hunks are skipped)."""
    hunks: list[Hunk] = []
    while True:
        ahead = r.next_nonblank()
        if not r.peek(ahead).startswith("@@"):
            return hunks
        r.pos += ahead
        hunks.append(read_hunk(r, path))


def read_hunk(r: Reader, path: str) -> Hunk:
    line_no = r.line_no
    header = r.next().rstrip("\r")
    match = HUNK_RE.match(header)
    if match is None:
        raise patch_error(
            "invalid_hunk_header",
            f"{path}: line {line_no}: {header!r} is not a hunk header "
            "'@@ -old_start,old_count +new_start,new_count @@'",
            path=path,
            line=line_no,
        )
    old_start, old_count, new_start, new_count = (
        int(g) if g is not None else 1 for g in match.group(1, 2, 3, 4)
    )
    hunk = Hunk(old_start, old_count, new_start, new_count, match.group(5).strip(), [], line_no)
    old_left, new_left, blank_tail = old_count, new_count, 0
    while not r.done and _continues(r, old_left, new_left, overrun=old_left < 0 or new_left < 0):
        line = r.next()
        if line.startswith("\\"):
            _mark_no_newline(hunk, r.line_no - 1, path)
            blank_tail = 0
            continue
        body = _body_line(line)
        if body is None:
            raise patch_error(
                "invalid_hunk_line",
                f"{path}: line {r.line_no - 1}: {line[:80]!r} does not start with ' ', '-' or '+'",
                path=path,
                line=r.line_no - 1,
            )
        hunk.lines.append(body)
        old_left -= body.tag != "+"
        new_left -= body.tag != "-"
        blank_tail = blank_tail + 1 if line in ("", "\r") else 0
    if (old_left > 0 or new_left > 0) and blank_tail:
        del hunk.lines[-blank_tail:]  # blank separators after an overcounted hunk, not context
    if not hunk.lines:
        raise patch_error(
            "invalid_hunk_line",
            f"{path}: line {line_no}: hunk has no body lines",
            path=path,
            line=line_no,
        )
    return hunk


def _continues(r: Reader, old_left: int, new_left: int, overrun: bool = False) -> bool:
    """Whether the next line still belongs to the current hunk. Once the body has outrun the
    header's counts (they are wrong), a line of one space is a blank context line, as diffs write
    one, not a separator."""
    line = r.peek()
    if line.startswith("\\"):
        return True
    if line.startswith(("@@", "diff --git ")):
        return False
    if old_left > 0 or new_left > 0:
        # an overcounted hunk ends where a new file patch clearly starts; when those two lines
        # are exactly the '-' and '+' lines its counts still expect, only if they name one file
        # (counts one long, as `git apply --recount` reads them)
        return not (
            r.at_file_header()
            and r.peek(2).startswith("@@")
            and ((old_left, new_left) != (1, 1) or _one_file(r.peek(), r.peek(1)))
        )
    if r.at_file_header():
        return False
    if overrun and line in (" ", " \r"):
        return True
    if is_blank(line):
        ahead = r.next_nonblank()
        return r.has(ahead) and _is_body(r.peek(ahead)) and not r.at_file_header(ahead)
    return _is_body(line)


def _one_file(old: str, new: str) -> bool:
    """Do `--- <old>` and `+++ <new>` name the same path (a/ b/ prefixes aside) or /dev/null?"""
    a, b = old[4:].split("\t", 1)[0].strip(), new[4:].split("\t", 1)[0].strip()
    a, b = a.removeprefix("a/"), b.removeprefix("b/")
    return a == b or "/dev/null" in (a, b)


def _is_body(line: str) -> bool:
    return line[:1] in (" ", "-", "+") or line in ("", "\r")


def _body_line(line: str) -> BodyLine | None:
    crlf = line.endswith("\r")
    core = line[:-1] if crlf else line
    if core == "":
        return BodyLine(" ", "", crlf)  # an empty context line whose leading space was trimmed
    if core[0] not in " -+":
        return None
    return BodyLine(core[0], core[1:], crlf)


def _mark_no_newline(hunk: Hunk, line_no: int, path: str) -> None:
    if not hunk.lines:
        raise patch_error(
            "invalid_hunk_line",
            f"{path}: line {line_no}: '\\ No newline at end of file' must follow a hunk line",
            path=path,
            line=line_no,
        )
    tag = hunk.lines[-1].tag
    hunk.old_no_newline |= tag != "+"
    hunk.new_no_newline |= tag != "-"

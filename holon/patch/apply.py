"""Context-first application of one file patch's hunks to a text file, in memory.

Hunks apply in order without overlap; line numbers are hints (see matcher)
and counts are advisory, so both only produce diagnostics. Line endings are
the file's: context lines are kept byte for byte, and added lines take the
file's dominant terminator unless the diff itself carries CR LF terminators
(a diff generated from the bytes, applied literally). The trailing-newline
state is preserved unless a `\\ No newline at end of file` marker changes it.
"""

from __future__ import annotations

from typing import Any

from holon.patch.align import hinted_start, place_all
from holon.patch.matcher import Locator, Placement, radius
from holon.patch.model import FilePatch, Hunk
from holon.patch.textfile import TextFile, encode

EMPTY = TextFile([], [], True, False)


def diagnostic(
    kind: str, path: str, hunk: int | None, message: str, **extra: Any
) -> dict[str, Any]:
    return {"kind": kind, "path": path, "hunk": hunk, "message": message, **extra}


def apply_hunks(text: TextFile, patch: FilePatch, path: str) -> tuple[bytes, list[dict[str, Any]]]:
    """The new content of `path` and the advisory diagnostics; raises PatchError when a hunk cannot
    apply."""
    diags: list[dict[str, Any]] = []
    for number, hunk in enumerate(patch.hunks, 1):
        _check_counts(hunk, number, path, diags)
    placements = place_all(Locator(text.keys, path), patch.hunks)
    out: list[str] = []
    literal = patch.literal_eol
    pos = drift = 0
    eof_hunk: Hunk | None = None
    for number, (hunk, placement) in enumerate(zip(patch.hunks, placements, strict=True), 1):
        hinted = hinted_start(hunk)
        if placement.relaxed:
            diags.append(
                diagnostic(
                    "whitespace_relaxed_match",
                    path,
                    number,
                    f"hunk {number} matched at line "
                    f"{placement.start + 1} only when trailing whitespace was ignored",
                )
            )
        if placement.start != hinted:
            diags.append(_offset(hunk, number, path, placement, hinted, hinted + drift))
        drift = placement.start - hinted
        out.extend(text.lines[pos : placement.start])
        pos = _emit(text, hunk, placement.start, out, literal)
        eof_hunk = hunk if pos == len(text.lines) else None
    out.extend(text.lines[pos:])
    final_newline = _final_newline(text, eof_hunk)
    if not literal and eof_hunk is not None:
        _fix_last_lines(text, eof_hunk, out, final_newline)
    return encode(out, final_newline), diags


def _offset(
    hunk: Hunk, number: int, path: str, placement: Placement, header: int, hint: int
) -> dict[str, Any]:
    """`hunk_offset`: how far from its header line the hunk applied, and how it was found."""
    offset = placement.start - header
    how = {
        "window": f"; its lines match once within {radius(hunk)} lines of line {hint + 1}",
        "file": (
            f"; nothing matched within {radius(hunk)} lines of line {hint + 1}, and its lines "
            "match once in the file"
        ),
        "between": "; its lines match once between the hunks placed around it",
    }.get(placement.search, "")
    return diagnostic(
        "hunk_offset",
        path,
        number,
        f"hunk {number} applied at line {placement.start + 1}, {offset:+d} lines from its "
        f"header{how}",
        offset=offset,
        search=placement.search,
    )


def _emit(text: TextFile, hunk: Hunk, start: int, out: list[str], literal: bool) -> int:
    """Append the hunk's new lines to `out`; returns the index of the first file line after the
    hunk."""
    i = start
    for line in hunk.lines:
        if line.tag == " ":
            out.append(text.lines[i])
            i += 1
        elif line.tag == "-":
            i += 1
        else:
            crlf = line.crlf if literal else text.crlf
            out.append(line.text + "\r" if crlf else line.text)
    return i


def _check_counts(hunk: Hunk, number: int, path: str, diags: list[dict[str, Any]]) -> None:
    old, new = len(hunk.old_lines), hunk.new_count_actual
    if (old, new) != (hunk.old_count, hunk.new_count):
        diags.append(
            diagnostic(
                "hunk_count_mismatch",
                path,
                number,
                f"hunk {number}: header {hunk.header} "
                f"but the body has {old} old and {new} new lines; applied by its body",
            )
        )


def _final_newline(text: TextFile, eof_hunk: Hunk | None) -> bool:
    """No-newline markers on the hunk that reaches the end decide; otherwise the file keeps its
    state."""
    if eof_hunk is not None and eof_hunk.new_no_newline:
        return False
    if eof_hunk is not None and eof_hunk.old_no_newline:
        return True
    return text.final_newline


def _fix_last_lines(text: TextFile, hunk: Hunk, out: list[str], final_newline: bool) -> None:
    """Terminators around the end of a CRLF file patched by an LF diff (the diff could not say
    them)."""
    if not out:
        return
    last_new = next((line for line in reversed(hunk.lines) if line.tag != "-"), None)
    if (
        not final_newline
        and last_new is not None
        and last_new.tag == "+"
        and out[-1].endswith("\r")
    ):
        out[-1] = out[-1][:-1]  # the CR we added belongs to a terminator the file no longer has
    if text.final_newline or not text.crlf:
        return
    last_old = max((k for k, line in enumerate(hunk.lines) if line.tag != "+"), default=None)
    if last_old is None or hunk.lines[last_old].tag != " ":
        return
    idx = len(out) - 1 - sum(1 for line in hunk.lines[last_old + 1 :] if line.tag == "+")
    if idx < len(out) - 1 and not out[idx].endswith("\r"):
        out[idx] += "\r"  # the old last line gained a terminator: the file's CR LF

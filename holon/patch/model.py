"""Typed unified-diff patches: file patches, hunks and their body lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Op = Literal["modify", "add", "delete", "rename", "metadata"]


@dataclass(frozen=True)
class BodyLine:
    """One hunk line: tag ' ' (context), '-' (removed) or '+' (added), text without its
    terminator."""

    tag: str
    text: str
    crlf: bool = False  # the diff line itself ended in CR LF (a diff of a CRLF file)


@dataclass
class Hunk:
    """One `@@ -a,b +c,d @@` hunk; header numbers and counts are hints, the body is the
    authority."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str
    lines: list[BodyLine]
    line_no: int  # 1-based line of the header in the patch text
    old_no_newline: bool = False  # `\ No newline at end of file` after the last old line
    new_no_newline: bool = False  # ... after the last new line

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @property
    def old_lines(self) -> list[str]:
        return [line.text for line in self.lines if line.tag != "+"]

    @property
    def new_count_actual(self) -> int:
        return sum(1 for line in self.lines if line.tag != "-")

    @property
    def at_eof(self) -> bool:
        """A no-newline marker pins the hunk to the end of the file."""
        return self.old_no_newline or self.new_no_newline


@dataclass
class FilePatch:
    """The changes to one file: modify, add (`--- /dev/null`), delete (`+++ /dev/null`), rename,
    or metadata (a git section with only metadata lines, such as a mode change).

    An add or delete may have no hunks: a git section that creates or removes an empty file.
    """

    op: Op
    old_path: str | None
    new_path: str | None
    hunks: list[Hunk]
    line_no: int
    ignored_metadata: list[str] = field(default_factory=list)  # git header lines, as written

    @property
    def path(self) -> str:
        """The path the patch is about: the new one for adds and renames, else the old one."""
        return (self.new_path if self.op in ("add", "rename") else self.old_path) or ""

    @property
    def touched(self) -> list[str]:
        return [p for p in (self.old_path, self.new_path) if p is not None]

    @property
    def literal_eol(self) -> bool:
        """True when the diff carries line terminators verbatim (some body line ends in CR LF)."""
        return any(line.crlf for hunk in self.hunks for line in hunk.lines)

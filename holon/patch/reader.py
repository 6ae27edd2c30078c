"""A cursor over the lines of a patch text, split on LF only."""

from __future__ import annotations


def split_patch(text: str) -> list[str]:
    """Lines of the patch without LF; a patch sent entirely with CR LF terminators loses its CRs.

    Only LF separates lines (a CR or form feed inside a line is content). A
    diff of a CRLF file keeps the CR on its body lines but not on its headers,
    so a CR on every line means the transport, not the diff, added them.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the patch's own final newline (a missing one is tolerated)
    if lines and all(line.endswith("\r") for line in lines):
        lines = [line[:-1] for line in lines]
    return lines


def is_blank(line: str) -> bool:
    return not line.strip()


class Reader:
    """Patch lines with a position; `line_no` is the 1-based number of the next line."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.pos = 0

    @property
    def done(self) -> bool:
        return self.pos >= len(self.lines)

    @property
    def line_no(self) -> int:
        return self.pos + 1

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.lines[i] if i < len(self.lines) else ""

    def has(self, ahead: int = 0) -> bool:
        return self.pos + ahead < len(self.lines)

    def next(self) -> str:
        line = self.lines[self.pos]
        self.pos += 1
        return line

    def skip_blank(self) -> None:
        while not self.done and is_blank(self.peek()):
            self.pos += 1

    def next_nonblank(self) -> int:
        """How many lines ahead the next non-blank line is (may point past the end)."""
        ahead = 0
        while self.has(ahead) and is_blank(self.peek(ahead)):
            ahead += 1
        return ahead

    def at_file_header(self, ahead: int = 0) -> bool:
        """A `--- `/`+++ ` pair, or a `diff --git` line, starts the next file patch here."""
        line = self.peek(ahead)
        return line.startswith("diff --git ") or (
            line.startswith("--- ") and self.peek(ahead + 1).startswith("+++ ")
        )

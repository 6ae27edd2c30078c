"""Text files as lines: strict UTF-8, LF or CR LF terminators, and the trailing-newline state."""

from __future__ import annotations

from dataclasses import dataclass

from holon.patch.errors import patch_error


@dataclass
class TextFile:
    """A file split on LF; `lines` keep a trailing CR, `keys` (what hunks match) drop it."""

    lines: list[str]
    keys: list[str]
    final_newline: bool  # the last line ends with a terminator (true for an empty file)
    crlf: bool  # CR LF is the dominant terminator

    @property
    def eol(self) -> str:
        return "\r\n" if self.crlf else "\n"


def decode(data: bytes, path: str) -> TextFile:
    """Split `data` into lines; non-UTF-8 or NUL-bearing (binary) content is refused, never
    guessed."""
    if b"\0" in data:
        raise patch_error(
            "unsupported_encoding", f"{path}: contains NUL bytes (binary content)", path=path
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise patch_error(
            "unsupported_encoding", f"{path}: not valid UTF-8 (byte offset {exc.start})", path=path
        ) from None
    lines = text.split("\n")
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    keys = [line.removesuffix("\r") for line in lines] if "\r" in text else lines
    crlf = text.count("\r\n") * 2 > text.count("\n")
    return TextFile(lines, keys, final_newline, crlf)


def encode(lines: list[str], final_newline: bool) -> bytes:
    """Join LF-split lines (each keeping any CR of its terminator) back into bytes."""
    if not lines:
        return b""
    return ("\n".join(lines) + ("\n" if final_newline else "")).encode("utf-8")

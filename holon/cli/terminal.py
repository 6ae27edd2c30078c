"""The terminal guard: escape sequences in untrusted text are kept off the operator's terminal,
while a pipe or a file gets every byte. Stdlib only: the click-free admission path uses it too."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from holon.safetext import for_terminal


class TerminalGuard:
    """A text stream in front of a terminal: every write passes through `for_terminal`, so text
    from outside (command output, channel messages, briefs, errors quoting input) cannot move the
    cursor, retitle the window or hide itself. `\\u001b` is also a JSON escape: JSON shown on a
    terminal stays valid and means the same. Anything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes with b"" to tell text streams from binary
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(for_terminal(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def buffer(self) -> _BinaryGuard:
        return _BinaryGuard(self._stream.buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _BinaryGuard:
    """The guard for bytes written to the terminal's binary buffer (click writes bytes there)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        text = bytes(data).decode("utf-8", "replace")
        self._stream.write(for_terminal(text).encode("utf-8"))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_terminal() -> None:
    """Put a TerminalGuard in front of stdout and stderr where they are terminals; a pipe or a
    file keeps every byte as written. Called once by the entry point (`holon.cli.entry`)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            tty = stream is not None and stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty and not isinstance(stream, TerminalGuard):
            setattr(sys, name, TerminalGuard(stream))


@contextmanager
def unguarded() -> Iterator[None]:
    """The terminal's own streams for a program that draws the screen itself (the console's
    Textual app writes escape sequences on purpose and escapes untrusted text before drawing it);
    the guard is back in front of them afterwards."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (
        s._stream if isinstance(s, TerminalGuard) else s
        for s in saved  # noqa: SLF001
    )
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

"""Reading command input safely: text and JSON from an argument, `@path` or stdin, bounded.

A file must be a regular file (a directory, a FIFO or a device is refused, never waited on or
read forever), input is capped at MAX_INPUT_BYTES, text must be UTF-8 and JSON must be
`holon.strictjson` JSON (no NaN/Infinity, bounded nesting). Every refusal is InvalidInput.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

from holon import strictjson
from holon.errors import InvalidInput
from holon.ids import quote

MAX_INPUT_BYTES = 16 * 1024 * 1024
JSON_HINT = "give a JSON literal, @path or - for stdin"


def read_text_arg(text: str | None, what: str = "TEXT") -> str:
    """TEXT, or `-` (or nothing, when stdin is not a terminal) for standard input; UTF-8 only."""
    if text is not None and text != "-":
        return checked_text(text, what)
    if text is None and sys.stdin.isatty():
        raise InvalidInput(
            f"no {what} given", kind="missing_input", hint=f"pass {what}, or `-` to read stdin"
        )
    return _decode(_read_capped(sys.stdin.buffer.read, what), "standard input")


def read_prompt_text(text: str | None, what: str = "TEXT") -> str:
    """A prompt as llm reads it: piped stdin first, then TEXT on a line of its own
    (`cat notes | holon prompt a "summarise"`). `-` or no TEXT reads stdin alone; a terminal,
    /dev/null or any other device on stdin is never read."""
    if text is None or text == "-":
        return read_text_arg(text, what)
    checked_text(text, what)
    if not _stdin_is_piped():
        return text
    piped = _decode(_read_capped(sys.stdin.buffer.read, "standard input"), "standard input")
    if not piped:
        return text
    return piped + ("" if piped.endswith("\n") else "\n") + text


def _stdin_is_piped() -> bool:
    """Whether stdin is a pipe, a socket or a regular file (something given to read)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, ValueError, OSError):  # closed, or a stream without a descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def checked_text(text: str, what: str) -> str:
    """`text` when it can be stored (UTF-8, no NUL); argv that was not UTF-8 arrives with lone
    surrogates, which no ledger can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{what} is not valid UTF-8 (character {exc.start})",
            kind="invalid_utf8",
            hint="send UTF-8 text",
        ) from None
    if "\x00" in text:
        raise InvalidInput(f"{what} holds a NUL character", hint="remove the NUL byte")
    return text


def parse_json_arg(raw: str, what: str) -> Any:
    """A JSON literal, `@path` or `-` (stdin), parsed strictly."""
    if raw.startswith("@"):
        raw = _decode(read_file(raw[1:], what, kind="invalid_json"), f"{what} file")
    elif raw == "-":
        raw = read_text_arg("-", what)
    try:
        return strictjson.loads(raw)
    except strictjson.InvalidJson as exc:
        raise InvalidInput(
            f"{what} is not valid JSON: {quote(str(exc))[1:-1]}",
            kind="invalid_json",
            hint=JSON_HINT,
        ) from None


def parse_json_object(raw: str, what: str) -> dict[str, Any]:
    value = parse_json_arg(raw, what)
    if not isinstance(value, dict):
        raise InvalidInput(
            f"{what} must be a JSON object, not a JSON {_json_type(value)}",
            kind="invalid_json",
            hint=f'e.g. {what} \'{{"key": "value"}}\'',
        )
    return value


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def read_file(path: str, what: str, kind: str = "invalid_input") -> bytes:
    """The bytes of regular file `path`, at most MAX_INPUT_BYTES; never blocks on a FIFO.
    InvalidInput of `kind` when it cannot be read."""
    shown = quote(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "cannot be opened"
        raise InvalidInput(f"{what}: {shown}: {why}", kind=kind, hint=JSON_HINT) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidInput(
                f"{what}: {shown} is not a regular file",
                kind=kind,
                hint="give a file, or `-` to read standard input",
            )
        with os.fdopen(os.dup(fd), "rb") as fh:
            return _read_capped(fh.read, what)
    except OSError as exc:
        raise InvalidInput(
            f"{what}: {shown}: {exc.strerror or exc}", kind=kind, hint=JSON_HINT
        ) from None
    finally:
        os.close(fd)


def _read_capped(read: Any, what: str) -> bytes:
    data = read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise InvalidInput(
            f"{what} is larger than {MAX_INPUT_BYTES} bytes",
            kind="oversize_input",
            hint="send less, or put the payload in a file the agent can read",
        )
    return data


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{where} is not valid UTF-8 (byte {exc.start})",
            kind="invalid_utf8",
            hint="send UTF-8 text",
        ) from None


MAX_LABEL_CHARS = 256


def checked_label(value: str | None, what: str) -> str | None:
    """A short one-line label (a source, a sender, an event type): UTF-8, no control
    character, at most MAX_LABEL_CHARS."""
    if value is None:
        return None
    checked_text(value, what)
    if len(value) > MAX_LABEL_CHARS or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        raise InvalidInput(
            f"{what} {quote(value, 80)} must be one line of at most {MAX_LABEL_CHARS} characters "
            "without control characters",
            hint=f"pass a short plain {what}",
        )
    return value

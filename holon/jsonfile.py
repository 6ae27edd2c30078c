"""A small file read without trusting it: a regular file only, a bounded number of
bytes, never blocking (a FIFO, a device or a symlink to one is refused, not opened for reading),
and strict JSON (holon.strictjson: no NaN, bounded nesting). One `Unreadable` (a ValueError) whose
message says what is wrong in words fit for `holon: corrupt_state: <path> <message>`."""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from holon import strictjson

MAX_BYTES = 16 << 20  # a run state with a long working memory stays far below this
MAX_DEPTH = 128


class Unreadable(ValueError):
    """The file exists and cannot be used; str() is the problem ("is not valid JSON (...)")."""


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, in chunks of 1 MiB (a size stat reports is never trusted:
    /proc says 0)."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_bytes(path: str | os.PathLike, limit: int = MAX_BYTES) -> bytes | None:
    """The file's bytes, None when it is missing (a dangling symlink too); Unreadable when it is
    not a regular file, cannot be read, or is larger than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(_os_problem(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise Unreadable("is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable("is not a regular file (a FIFO, a socket or a device)")
        if st.st_size > limit:
            raise Unreadable(f"is too large ({st.st_size} bytes; at most {limit})")
        data = read_fd(fd, limit + 1)
    except OSError as exc:
        raise Unreadable(_os_problem(exc)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise Unreadable(f"is too large (more than {limit} bytes)")
    return data


def load(path: str | os.PathLike, limit: int = MAX_BYTES) -> Any:
    """The JSON value in `path`, None when the file is missing; Unreadable otherwise."""
    data = read_bytes(path, limit)
    return None if data is None else parse(data)


def parse(data: bytes) -> Any:
    """Strict JSON from a file's bytes; Unreadable with the reason."""
    if not data.strip():
        raise Unreadable("is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("is not valid UTF-8") from None
    try:
        return strictjson.loads(data, max_depth=MAX_DEPTH)
    except strictjson.InvalidJson as exc:
        cause = exc.__context__  # the parser's own error, when it was one
        if isinstance(cause, json.JSONDecodeError):
            raise Unreadable(f"is not valid JSON ({cause.msg} at line {cause.lineno})") from None
        raise Unreadable(f"is not valid JSON ({str(exc)[:120]})") from None


def conflicted(data: bytes) -> bool:
    """Does `data` hold a git merge conflict marker line?"""
    return any(line.startswith((b"<<<<<<< ", b">>>>>>> ")) for line in data.splitlines())


def object_of(path: str | os.PathLike, limit: int = MAX_BYTES) -> dict[str, Any] | None:
    """`load`, and the value must be a JSON object."""
    data = read_bytes(path, limit)
    if data is None:
        return None
    value = parse(data)
    if not isinstance(value, dict):
        raise Unreadable("is not a JSON object")
    return value


def kind_of(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "cannot be read (permission denied)"
    return f"cannot be read ({exc.strerror or type(exc).__name__})"

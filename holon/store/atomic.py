"""Atomic whole-file writes: tmp file in the same directory, fsync, rename, fsync the directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def fsync_dir(path: str | os.PathLike) -> None:
    """fsync a directory so a rename or create inside it is durable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def stage_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> Path:
    """Write `data` to a fsynced temp file beside `path` and return it; os.replace it into place.

    `mode` defaults to the mode of the existing file (so replacement keeps an
    executable bit), else 0o644. Callers that stage several files can commit
    them together or unlink the temp files to abandon the change.
    """
    path = Path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    return tmp


def write_bytes(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically; readers see the old or the new file, never half."""
    path = Path(path)
    os.replace(stage_bytes(path, data, mode=mode), path)
    fsync_dir(path.parent)


def write_text(path: str | os.PathLike, text: str, *, mode: int | None = None) -> None:
    write_bytes(path, text.encode("utf-8"), mode=mode)


def dumps(value: Any) -> str:
    """Compact, UTF-8 preserving JSON: the one encoding of records on disk."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_json(path: str | os.PathLike, value: Any, *, mode: int | None = None) -> None:
    """Atomically replace `path` with pretty JSON (state files are read by people too)."""
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=_default)
    write_text(path, text + "\n", mode=mode)


def read_json(path: str | os.PathLike, default: Any = None) -> Any:
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read())
    except FileNotFoundError:
        return default

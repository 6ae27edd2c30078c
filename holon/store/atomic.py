"""Atomic whole-file writes: tmp file in the same directory, fsync, rename, fsync the directory."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

from holon.store import crashpoint, groupcommit

FILE_MODE = 0o600  # runtime files are private to their owner
DIR_MODE = 0o700
_UMASK: list[int] = []


def umask() -> int:
    """The process umask (read once: reading it means setting it)."""
    if not _UMASK:
        mask = os.umask(0o077)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def private(mode: int) -> int:
    """`mode` narrowed by the umask: a stricter umask wins, a looser one never widens."""
    return mode & ~umask()


def make_private_dir(path: str | os.PathLike) -> None:
    """Create `path` (and missing parents) owner-only; tighten it if it exists and is wider."""
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    tighten(path, DIR_MODE)


def tighten(path: str | os.PathLike, mode: int) -> None:
    """Remove permission bits beyond `mode` (narrowed by the umask) from an existing path."""
    try:
        st = os.stat(path)
    except OSError:
        return
    want = st.st_mode & 0o7777 & private(mode)
    if want != st.st_mode & 0o7777:
        try:
            os.chmod(path, want)
        except OSError:
            pass


def write_all(fd: int, data: bytes | memoryview, step: str) -> None:
    """Write every byte of `data` (os.write may write fewer); a write that makes no progress is a
    full disk. `step` names the durable step for crash tests (holon.store.crashpoint)."""
    view = memoryview(data)
    crashpoint.write_step(step, fd, view)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]


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


def stage_bytes(
    path: str | os.PathLike, data: bytes, *, mode: int | None = None, sync: bool = True
) -> Path:
    """Write `data` to a fsynced temp file beside `path` and return it; os.replace it into place.
    Without `sync` nothing is fsynced: for a cache or a derived file that checks itself.

    `mode` defaults to the mode of the existing file (so replacement keeps an
    executable bit), else 0o600 narrowed by the umask (runtime files are private).
    Callers that stage several files can commit them together or unlink the temp
    files to abandon the change.
    """
    path = Path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = private(FILE_MODE)
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        write_all(fd, data, "atomic.write")
        os.fchmod(fd, mode)
        if sync:
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


def write_bytes(
    path: str | os.PathLike, data: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Replace `path` with `data` atomically; readers see the old or the new file, never half.
    The ledger appends a group commit deferred are made durable first (log, then change:
    holon.store.groupcommit). `durable=False` is for a cache or a derived file that is checked
    when read and made again when it fails: no fsync and no crash point (a killed process still
    leaves the old or the new file; a power loss may leave an empty or partial one)."""
    path = Path(path)
    if durable:
        groupcommit.barrier()
    tmp = stage_bytes(path, data, mode=mode, sync=durable)
    if not durable:  # no crash point: a cache is no step of a durable change
        os.replace(tmp, path)
        return
    try:
        crashpoint.step("atomic.replace")
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_text(
    path: str | os.PathLike, text: str, *, mode: int | None = None, durable: bool = True
) -> None:
    write_bytes(path, text.encode("utf-8"), mode=mode, durable=durable)


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


def write_json(
    path: str | os.PathLike, value: Any, *, mode: int | None = None, durable: bool = True
) -> None:
    """Atomically replace `path` with pretty JSON (state files are read by people too)."""
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=_default)
    write_text(path, text + "\n", mode=mode, durable=durable)


def read_json(path: str | os.PathLike, default: Any = None) -> Any:
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read())
    except FileNotFoundError:
        return default


def remove_stale_temps(directory: str | os.PathLike) -> list[str]:
    """Remove the temp files (`.<name>.tmp.<pid>`) that writers killed between staging and
    renaming left in `directory`; a temp whose writer is still alive is kept. Returns the names
    removed."""
    from holon.procs import alive

    removed = []
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for e in entries:
        head, sep, pid = e.name.rpartition(".tmp.")
        if not (sep and head.startswith(".") and pid.isdigit()) or alive(int(pid)):
            continue
        try:
            os.unlink(e.path)
            removed.append(e.name)
        except OSError:
            pass
    return removed

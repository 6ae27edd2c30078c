"""One ApplyPatch call as a transaction: plan every file in memory (holon.patch.commit writes).

Nothing touches the tree until every file patch has applied in memory (a
deleted file's hunks must remove all of it). Mode lines are recorded, never
applied (the RFC's metadata policy): an edited or renamed file keeps its
permission bits, a new one gets NEW_FILE_MODE, and a mode-only section changes
nothing. Each change records what it read (bytes and mode, or that a path was
free), so the commit can refuse to overwrite a file another writer changed
since.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holon.patch.apply import EMPTY, apply_hunks
from holon.patch.errors import patch_error
from holon.patch.model import FilePatch
from holon.patch.paths import normalise, resolve
from holon.patch.textfile import decode

NEW_FILE_MODE = 0o644  # a new file's mode, whatever its patch's mode lines say


@dataclass
class Change:
    """The planned effect of one file patch: write `data` to `dst`, then unlink `src`."""

    patch: FilePatch
    src: Path | None = None
    dst: Path | None = None
    data: bytes = b""
    mode: int = NEW_FILE_MODE
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    # (path, label, (bytes, mode) as read, or None for a path that must stay free)
    expect: list[tuple[Path, str, tuple[bytes, int] | None]] = field(default_factory=list)


def plan(root: Path, cwd: Path, patches: list[FilePatch]) -> list[Change]:
    """Every change, computed in memory; raises PatchError before any write."""
    changes = [_plan_one(root, cwd, patch) for patch in patches]
    seen: dict[Path, str] = {}
    for change in changes:
        for real in {p for p in (change.src, change.dst) if p is not None}:
            if real in seen:
                raise patch_error(
                    "duplicate_file_patch",
                    f"{change.patch.path}: resolves to the same file as {seen[real]}",
                    path=change.patch.path,
                )
            seen[real] = change.patch.path
    return changes


def _plan_one(root: Path, cwd: Path, patch: FilePatch) -> Change:
    old = resolve(root, cwd, patch.old_path) if patch.old_path is not None else None
    new = resolve(root, cwd, patch.new_path) if patch.new_path is not None else None
    label = normalise(patch.path)
    if patch.op == "add":
        assert new is not None
        _require_absent(new, label)
        data, diags = apply_hunks(EMPTY, patch, label)
        return Change(patch, dst=new, data=data, diagnostics=diags, expect=[(new, label, None)])
    assert old is not None
    if patch.op == "metadata":  # mode lines only: recorded, nothing changes
        read_file(old, label)
        return Change(patch)
    old_label = normalise(patch.old_path or "")
    raw, mode = read_file(old, old_label)
    expect: list[tuple[Path, str, tuple[bytes, int] | None]] = [(old, old_label, (raw, mode))]
    if patch.op == "rename":
        assert new is not None
        _require_absent(new, label)
        expect.append((new, label, None))
        if not patch.hunks:
            return Change(patch, src=old, dst=new, data=raw, mode=mode, expect=expect)
    data, diags = apply_hunks(decode(raw, label), patch, label)
    if patch.op == "delete":
        _require_emptied(patch, data, label)
        return Change(patch, src=old, diagnostics=diags, expect=expect)
    return Change(
        patch,
        src=old if patch.op == "rename" else None,
        dst=new or old,
        data=data,
        mode=mode,
        diagnostics=diags,
        expect=expect,
    )


def _require_emptied(patch: FilePatch, left: bytes, label: str) -> None:
    """A delete removes the whole file: what its hunks leave must be nothing (git apply's rule)."""
    if not left:
        return
    lines = left.count(b"\n") + (not left.endswith(b"\n"))
    what = (
        "it has no hunks, which deletes only an empty file"
        if not patch.hunks
        else "its hunks' '-' lines are not the whole file"
    )
    raise patch_error(
        "partial_delete",
        f"{label}: the file patch deletes the file ('+++ /dev/null') but {what}: "
        f"{lines} line{'s' if lines != 1 else ''} would be left; nothing was changed",
        path=label,
        lines_left=lines,
    )


def read_file(path: Path, label: str) -> tuple[bytes, int]:
    """The bytes and permission bits of the regular file at `path`, from one open file (a FIFO
    or device swapped in is refused, never read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise patch_error("missing_file", f"{label}: does not exist", path=label) from None
    except OSError as exc:
        if os.path.lexists(path) and not path.is_file():
            raise patch_error(
                "missing_file", f"{label}: is not a regular file", path=label
            ) from None
        raise patch_error("io_error", f"{label}: cannot read: {exc.strerror}", path=label) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise patch_error("missing_file", f"{label}: is not a regular file", path=label)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), st.st_mode & 0o7777
    except OSError as exc:
        raise patch_error("io_error", f"{label}: cannot read: {exc.strerror}", path=label) from None
    finally:
        os.close(fd)


def _require_absent(path: Path, label: str) -> None:
    if os.path.lexists(path):
        raise patch_error("existing_file", f"{label}: already exists", path=label)

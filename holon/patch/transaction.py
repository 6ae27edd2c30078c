"""One ApplyPatch call as a transaction: plan every file in memory, then stage, replace, delete.

Nothing touches the tree until every file patch has applied in memory. Then
all new contents are staged as fsynced temp files beside their targets (a
failure removes them and any directories made for them), renamed into place,
and only then are deleted files and rename sources unlinked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holon.patch.apply import EMPTY, apply_hunks
from holon.patch.errors import patch_error
from holon.patch.model import FilePatch
from holon.patch.paths import normalise, resolve
from holon.patch.textfile import decode
from holon.store.atomic import fsync_dir, stage_bytes

NEW_FILE_MODE = 0o644


@dataclass
class Change:
    """The planned effect of one file patch: write `data` to `dst`, then unlink `src`."""

    patch: FilePatch
    src: Path | None = None
    dst: Path | None = None
    data: bytes = b""
    mode: int = NEW_FILE_MODE
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


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
        return Change(patch, dst=new, data=data, diagnostics=diags)
    assert old is not None
    raw, mode = _read(old, normalise(patch.old_path or ""))
    if patch.op == "rename":
        assert new is not None
        _require_absent(new, label)
        if not patch.hunks:
            return Change(patch, src=old, dst=new, data=raw, mode=mode)
    data, diags = apply_hunks(decode(raw, label), patch, label)
    if patch.op == "delete":  # the hunks verified the content; the file goes
        return Change(patch, src=old, diagnostics=diags)
    return Change(
        patch,
        src=old if patch.op == "rename" else None,
        dst=new or old,
        data=data,
        mode=mode,
        diagnostics=diags,
    )


def _read(path: Path, label: str) -> tuple[bytes, int]:
    if not path.is_file():
        why = "does not exist" if not path.exists() else "is not a regular file"
        raise patch_error("missing_file", f"{label}: {why}", path=label)
    try:
        return path.read_bytes(), path.stat().st_mode & 0o7777
    except OSError as exc:
        raise patch_error("io_error", f"{label}: cannot read: {exc.strerror}", path=label) from None


def _require_absent(path: Path, label: str) -> None:
    if os.path.lexists(path):
        raise patch_error("existing_file", f"{label}: already exists", path=label)


def commit(changes: list[Change]) -> None:
    """Stage every write, then rename them all into place, then unlink deletions and rename
    sources."""
    staged: list[tuple[Path, Path]] = []
    made: list[Path] = []
    try:
        for change in changes:
            if change.src is not None and not os.access(change.src.parent, os.W_OK | os.X_OK):
                # an unlink that would fail after the renames: refuse now, while nothing changed
                raise PermissionError(13, "Permission denied", str(change.src))
            if change.dst is not None:
                _make_parents(change.dst.parent, made)
                staged.append((stage_bytes(change.dst, change.data, mode=change.mode), change.dst))
    except OSError as exc:
        _abandon(staged, made)
        raise patch_error(
            "io_error",
            f"cannot write {exc.filename}: {exc.strerror}; nothing was changed",
            path=str(exc.filename),
        ) from None
    dirs = set()
    for tmp, dst in staged:
        os.replace(tmp, dst)
        dirs.add(dst.parent)
    for change in changes:
        if change.src is not None:
            change.src.unlink()
            dirs.add(change.src.parent)
    for d in dirs:
        fsync_dir(d)


def _make_parents(directory: Path, made: list[Path]) -> None:
    """Create missing directories, outermost first, recording each in `made` as it is created."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for d in reversed(missing):
        d.mkdir()
        made.append(d)


def _abandon(staged: list[tuple[Path, Path]], made: list[Path]) -> None:
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)
    for d in reversed(made):
        try:
            d.rmdir()
        except OSError:
            pass

"""Artifacts: full payloads (command output, failure details) kept on disk and referenced by
path."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from holon.store import crashpoint
from holon.store.atomic import write_bytes


def write_artifact(artifacts_dir: Path, stem: str, data: bytes | str) -> str:
    """Persist a full payload and return its absolute path (the path-only artifact reference)."""
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = artifacts_dir / f"{stem}-{secrets.token_hex(4)}.log"
    write_bytes(path, data)
    return os.fspath(path.absolute())


def remove_file(path: str | os.PathLike) -> None:
    """Remove one file (an artifact, a ledger segment); one unlink, so it is there or gone."""
    crashpoint.step("gc.unlink")
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_tree(path: Path, first: str) -> None:
    """Remove a directory whose meaning lives in its file `first` (a task's task.json): that file
    goes first, so a crash part way leaves a directory readers ignore, which the next gc removes."""
    crashpoint.step("gc.unlink")
    try:
        os.unlink(path / first)
    except FileNotFoundError:
        pass
    crashpoint.step("gc.rmtree")
    shutil.rmtree(path, ignore_errors=True)

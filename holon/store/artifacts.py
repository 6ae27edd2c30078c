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


REMOVING = ".removing"  # suffix of a directory gc has taken away from its readers


def removing(name: str) -> bool:
    """Is `name` a directory an interrupted removal left (`.<name>.removing`)?"""
    return name.startswith(".") and name.endswith(REMOVING)


def remove_tree(path: Path) -> None:
    """Remove a directory in two steps: one rename takes it from its readers (they skip hidden
    names), then it is deleted. A crash part way leaves `.<name>.removing`, which the next gc
    deletes at once."""
    if not removing(path.name):
        crashpoint.step("gc.rename")
        gone = path.with_name(f".{path.name}{REMOVING}")
        try:
            os.rename(path, gone)
        except FileNotFoundError:
            return
        path = gone
    crashpoint.step("gc.rmtree")
    shutil.rmtree(path, ignore_errors=True)

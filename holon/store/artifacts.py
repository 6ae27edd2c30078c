"""Artifacts: full payloads (command output, failure details) kept on disk and referenced by
path."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from holon.store.atomic import write_bytes


def write_artifact(artifacts_dir: Path, stem: str, data: bytes | str) -> str:
    """Persist a full payload and return its absolute path (the path-only artifact reference)."""
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = artifacts_dir / f"{stem}-{secrets.token_hex(4)}.log"
    write_bytes(path, data)
    return os.fspath(path.absolute())

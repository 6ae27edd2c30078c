"""The files the memory index holds whole: `memory/*.md` (the first MAX_MEMORY_FILES) and the
workspace profile. A file is re-read when its size or mtime changed, and hashed when the runtime
marked memory dirty (and always, up to HASH_ALWAYS_BYTES, for the two core memory files).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from holon import clock, confined
from holon.home.layout import Home
from holon.memory import sources
from holon.memory.catchup import lstat, source_path
from holon.memory.schema import Writer

TRACKED_BYTES = 4 << 20  # of a memory file or the workspace profile: the rest is not indexed
HASH_ALWAYS_BYTES = 1 << 20  # memory files up to this size are hashed on every search
MAX_MEMORY_FILES = 100
ALWAYS_HASHED = ("memory/self.md", "memory/operator.md")


def _tracked_files(home: Home) -> list[tuple[str, Path, str]]:
    """(relative path, path, kind) of every file indexed whole: memory/*.md and the workspace
    profile."""
    out: list[tuple[str, Path, str]] = []
    try:
        names = [n for n in confined.names(home.root, "memory") or [] if n.endswith(".md")]
    except confined.Refused:  # memory/ is a symlink out of the home, or not a directory
        names = []
    for name in names[:MAX_MEMORY_FILES]:
        out.append((f"memory/{name}", home.memory / name, "memory_file"))
    out.append((source_path(home, home.workspace_json), home.workspace_json, "workspace"))
    return out


def file_changes(w: Writer, *, force: bool) -> list[tuple[str, Path, str, bytes | None]]:
    """Tracked files whose content differs from what is indexed (None: the file is gone)."""
    changes: list[tuple[str, Path, str, bytes | None]] = []
    present = set()
    for rel, path, kind in _tracked_files(w.home):
        row = w.source(f"file:{rel}")
        st = lstat(path)
        if st is None:
            if row is not None:
                changes.append((rel, path, kind, None))
            continue
        present.add(rel)
        same_stat = row is not None and (row["size"], row["mtime_ns"]) == (
            st.st_size,
            st.st_mtime_ns,
        )
        hash_it = force or rel in ALWAYS_HASHED
        if same_stat and not (hash_it and st.st_size <= HASH_ALWAYS_BYTES):
            continue
        try:  # beneath the home: never through a symlink out of it, a FIFO or a device
            found = confined.read(w.home.root, rel, TRACKED_BYTES, truncate=True)
        except confined.Refused:
            found = None
        if found is None:
            present.discard(rel)
            if row is not None:
                changes.append((rel, path, kind, None))
            continue
        data = found.data
        if row is None or hashlib.sha256(data).hexdigest() != row["digest"] or not same_stat:
            changes.append((rel, path, kind, data))
    for row in w.conn.execute("SELECT name FROM sources WHERE name LIKE 'file:%'").fetchall():
        rel = row[0][len("file:") :]
        if rel not in present and not any(c[0] == rel for c in changes):
            changes.append((rel, w.home.root / rel, "memory_file", None))
    return changes


def sync_file(w: Writer, rel: str, path: Path, kind: str, data: bytes | None) -> None:
    w.drop_origin(f"file:{rel}")
    if data is None:
        w.conn.execute("DELETE FROM sources WHERE name = ?", (f"file:{rel}",))
        return
    text = data.decode("utf-8", "replace")
    st = lstat(path)
    if st is None:  # gone since it was read: the next search sees that
        return
    workspace = None
    if kind == "workspace":
        try:
            profile = json.loads(text)
        except ValueError:
            profile = {}
        ws = profile.get("workspace_id") if isinstance(profile, dict) else None
        workspace = ws if isinstance(ws, str) and ws else sources.DEFAULT_WORKSPACE
    for doc in sources.file_docs(
        rel, text, clock.iso(st.st_mtime), kind=kind, workspace_id=workspace
    ):
        w.upsert(doc)
    w.set_source(
        f"file:{rel}",
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        digest=hashlib.sha256(data).hexdigest(),
    )

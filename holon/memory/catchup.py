"""Catch-up of the ledgers: briefs, episodes and their roll-ups, work items (with their open
plans) and the transcript, read from the (logical) offset indexed last.

Ledgers are append-only, so only the bytes past the offset recorded for each are read; a ledger
that shrank or whose head changed (the bytes before that offset hash differently) is re-read
from the start. Each chunk of catch-up commits with its offset, so a crash loses nothing and
repeats nothing. An open work item's plan file is tracked for hand edits.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holon import confined
from holon.home.layout import Home
from holon.memory import project, sources
from holon.memory.schema import Writer, txn
from holon.store import jsonl, segments

_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
CHUNK_BYTES = 4 << 20  # ledger bytes read and committed per step of catch-up
HEAD_BYTES = 4096  # the bytes before the indexed offset, hashed to notice a replaced ledger


def _head(path: Path, upto: int) -> str:
    """The digest of the ledger's last bytes before logical offset `upto` (offsets run across
    rotated segments, holon.store.segments, so a rotation changes nothing here)."""
    return hashlib.sha256(segments.bytes_before(path, upto, HEAD_BYTES)).hexdigest()


def _moved(path: Path, row: sqlite3.Row) -> bool:
    """The bytes before the indexed offset are not the ones indexed: the ledger was replaced."""
    return row["offset"] > 0 and _head(path, row["offset"]) != row["digest"]


def _doc(build: Callable[..., sources.Doc | None], *args: Any) -> sources.Doc | None:
    """The document of one record, or None for a record too malformed to be one: a hand-edited
    or foreign line must never stop the rest of its ledger from being indexed."""
    try:
        return build(*args)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


class Ledger:
    """An append-only ledger as a source: by default each record is one doc, built by `build`
    (briefs, episodes); work items and the transcript override `records`."""

    def __init__(
        self,
        name: str,
        path: Path,
        rel: str,
        build: Callable[[dict[str, Any], str], sources.Doc | None] | None = None,
    ) -> None:
        self.name, self.path, self.rel, self.build = name, path, rel, build

    def reset(self, w: Writer) -> None:
        w.drop_origin(self.name)

    def records(self, w: Writer, recs: list[dict[str, Any]]) -> None:
        for rec in recs:
            if self.build is not None and (doc := _doc(self.build, rec, self.rel)):
                w.upsert(doc)


class _WorkItems(Ledger):
    def reset(self, w: Writer) -> None:
        super().reset(w)
        w.conn.execute("DELETE FROM sources WHERE name LIKE 'plan:%'")

    def records(self, w: Writer, recs: list[dict[str, Any]]) -> None:
        latest = {r["id"]: r for r in recs if isinstance(r.get("id"), str)}
        for rec in latest.values():
            index_work_item(w, rec)


def index_work_item(w: Writer, rec: dict[str, Any]) -> None:
    """A work item with its plan; an open item's plan file is tracked for hand edits. An id that
    is not a plain name (a hand-edited ledger) is indexed without a plan: ids never become
    paths outside work-items/."""
    st, raw = None, b""
    if _PLAIN_ID.fullmatch(rec["id"]):
        path = w.home.plan_path(rec["id"])
        st, raw = lstat(path), _read_plan(w.home, path)
        if raw is None:
            st, raw = None, b""
    plan = raw.decode("utf-8", "replace") if st else None
    doc = _doc(sources.work_item_doc, rec, source_path(w.home, w.home.work_items), plan)
    if doc is None:
        return
    w.upsert(doc)
    if rec.get("state") == "open":
        w.set_source(
            f"plan:{rec['id']}",
            size=st.st_size if st else -1,
            mtime_ns=st.st_mtime_ns if st else -1,
            digest=hashlib.sha256(raw).hexdigest() if st else "",
            extra=json.dumps(rec),  # ASCII: a lone surrogate survives as an escape
        )
    else:
        w.conn.execute("DELETE FROM sources WHERE name = ?", (f"plan:{rec['id']}",))


class _Transcript(Ledger):
    """Messages and tool executions. A call is remembered (table `calls`) until its result comes
    back, even across catch-ups; a turn's terminal forgets whatever of it never came back."""

    def reset(self, w: Writer) -> None:
        super().reset(w)
        w.conn.execute("DELETE FROM calls")
        w.conn.execute("DELETE FROM meta WHERE key = 'workspace'")

    def records(self, w: Writer, recs: list[dict[str, Any]]) -> None:
        row = w.conn.execute("SELECT value FROM meta WHERE key = 'workspace'").fetchone()
        workspace = row[0] if row else sources.DEFAULT_WORKSPACE
        for entry in recs:
            try:
                workspace = self._entry(w, entry, workspace)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue  # a malformed entry is not memory; the rest still is
        w.conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('workspace', ?)", (project.clean(workspace),)
        )

    def _entry(self, w: Writer, entry: dict[str, Any], workspace: str) -> str:
        """Index one transcript entry; returns the workspace in effect after it."""
        kind, turn, data = entry.get("kind"), entry.get("turn_id"), entry.get("data") or {}
        if kind == "turn_context" and isinstance(data.get("workspace_id"), str):
            workspace = data["workspace_id"]
        elif kind == "message":
            if doc := _doc(sources.message_doc, entry, self.rel, workspace):
                w.upsert(doc)
        elif kind == "assistant_round":
            for call in data.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id"):
                    key = f"{data.get('round_index', 0)}:{call['id']}"
                    self._remember(w, entry, key, call.get("id"), call)
        elif kind == "tool_call" and data.get("key"):
            self._remember(w, entry, data["key"], data.get("call_id"), data)
        elif kind == "tool_result" and data.get("key"):
            self._result(w, entry, data, workspace)
        elif kind == "turn_terminal" and turn:
            w.conn.execute("DELETE FROM calls WHERE turn_id = ?", (str(turn),))
        return workspace

    def _remember(self, w: Writer, entry: dict, key: str, call_id: Any, call: dict) -> None:
        record = {
            "name": call.get("name"),
            "arguments": call.get("arguments", call.get("raw_arguments")),
            "call_id": call_id,
            "key": key,
            "turn_id": entry.get("turn_id"),
            "created_at": entry.get("created_at"),
        }
        w.conn.execute(
            "INSERT OR REPLACE INTO calls VALUES (?,?,?)",
            (f"{entry.get('turn_id')}:{key}", entry.get("turn_id"), json.dumps(record)),
        )

    def _result(self, w: Writer, entry: dict, data: dict, workspace: str) -> None:
        ident = f"{entry.get('turn_id')}:{data['key']}"
        row = w.conn.execute("SELECT call FROM calls WHERE key = ?", (ident,)).fetchone()
        if row is not None:
            call = json.loads(row[0])
            w.conn.execute("DELETE FROM calls WHERE key = ?", (ident,))
        else:  # the call was never recorded: what the result says of it
            call = {
                "name": data.get("tool_name"),
                "call_id": data.get("call_id"),
                "key": data["key"],
                "turn_id": entry.get("turn_id"),
            }
        if doc := _doc(sources.tool_doc, call, entry, self.rel, workspace):
            w.upsert(doc)


def ledgers(home: Home) -> list[Ledger]:
    return [
        Ledger("briefs", home.briefs, source_path(home, home.briefs), sources.brief_doc),
        Ledger(
            "episodes",
            home.context_episodes,
            source_path(home, home.context_episodes),
            sources.episode_doc,
        ),
        Ledger(
            "summaries",
            home.context_summaries,
            source_path(home, home.context_summaries),
            sources.summary_doc,
        ),
        Ledger(
            "rollups",
            home.context_rollups,
            source_path(home, home.context_rollups),
            sources.rollup_doc,
        ),
        _WorkItems("work_items", home.work_items, source_path(home, home.work_items)),
        _Transcript("transcript", home.transcript, source_path(home, home.transcript)),
    ]


def source_path(home: Home, path: Path) -> str:
    """A source's path relative to the home, as results show it."""
    return path.relative_to(home.root).as_posix()


def ledger_stale(w: Writer, ledger: Ledger) -> bool:
    row = w.source(ledger.name)
    size = jsonl.end_offset(ledger.path)  # logical: rotated segments included
    if row is None:
        return size > 0
    return size != row["offset"] or _moved(ledger.path, row)


def catch_up_ledger(w: Writer, ledger: Ledger) -> None:
    """Index the complete lines past the recorded (logical) offset, one committed chunk at a
    time, following the ledger into its rotated segments."""
    size = jsonl.end_offset(ledger.path)
    row = w.source(ledger.name)
    offset = row["offset"] if row else 0
    if row is not None and (size < offset or _moved(ledger.path, row)):
        txn(w, lambda: (ledger.reset(w), w.set_source(ledger.name)))
        offset = 0
    recs: list[dict] = []
    new, chunk = offset, 0
    for here, line in jsonl.lines(ledger.path, offset):
        rec = jsonl.parse_line(line)
        if rec is not None:
            recs.append(rec)
        new, chunk = here + len(line), chunk + len(line)
        if chunk >= CHUNK_BYTES:
            _commit_chunk(w, ledger, recs, new)
            recs, chunk, offset = [], 0, new
    if new != offset:
        _commit_chunk(w, ledger, recs, new)


def _commit_chunk(w: Writer, ledger: Ledger, recs: list[dict], new: int) -> None:
    txn(
        w,
        lambda: (
            ledger.records(w, recs),
            w.set_source(ledger.name, offset=new, size=new, digest=_head(ledger.path, new)),
        ),
    )


def plan_changes(w: Writer, *, force: bool) -> list[dict[str, Any]]:
    """Open work items whose plan file changed since they were indexed: by size or mtime, and
    with `force` by content too."""
    out = []
    for row in w.conn.execute("SELECT * FROM sources WHERE name LIKE 'plan:%'").fetchall():
        rec = json.loads(row["extra"])
        if not _PLAIN_ID.fullmatch(str(rec.get("id"))):
            continue  # indexed without a plan (index_work_item): its id never becomes a path
        path = w.home.plan_path(rec["id"])
        st = lstat(path)
        now = (st.st_size, st.st_mtime_ns) if st else (-1, -1)
        if now != (row["size"], row["mtime_ns"]):
            out.append(rec)
        elif force and now[0] >= 0 and _plan_digest(w.home, path) != row["digest"]:
            out.append(rec)
    return out


def _plan_digest(home: Home, path: Path) -> str:
    raw = _read_plan(home, path)
    return "" if raw is None else hashlib.sha256(raw).hexdigest()


def _read_plan(home: Home, path: Path) -> bytes | None:
    """The head of a plan file, read beneath the home (holon.confined); None when there is none
    or it was refused."""
    rel = path.relative_to(home.root)
    try:
        found = confined.read(home.root, rel, sources.MAX_BODY * 4, truncate=True)
    except confined.Refused:
        return None
    return None if found is None else found.data


def lstat(path: Path) -> os.stat_result | None:
    """The file's own stat, never its symlink target's (a change check only: reads are
    confined)."""
    try:
        return os.stat(path, follow_symlinks=False)
    except OSError:
        return None

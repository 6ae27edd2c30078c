"""The memory index's file and tables: `.holon/indexes/memory.sqlite3` (created 0600), its schema
version in `PRAGMA user_version` and its agent in `meta`; an index of another schema or agent,
or one SQLite cannot read, is not used (holon.memory.index rebuilds it). Writers serialise on
`locks/memory.lock`; `Writer` is every write of a document with its FTS5 projection.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holon.errors import OperationFailed
from holon.home.layout import Home
from holon.memory import project, sources
from holon.store.locks import LockBusy, locked

SCHEMA = 2  # 2: turn_id and rank_kind columns, the porter stemmer

DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  ref TEXT NOT NULL UNIQUE,
  origin TEXT NOT NULL,
  kind TEXT NOT NULL,
  scope_kind TEXT NOT NULL,
  workspace_id TEXT,
  agent_id TEXT NOT NULL,
  source_path TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  metadata TEXT NOT NULL,
  turn_id TEXT,
  rank_kind TEXT NOT NULL
);
CREATE INDEX docs_origin ON docs(origin);
CREATE VIRTUAL TABLE fts USING fts5(
  title, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE sources(
  name TEXT PRIMARY KEY,
  offset INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ns INTEGER NOT NULL DEFAULT 0,
  digest TEXT NOT NULL DEFAULT '',
  extra TEXT
);
CREATE TABLE calls(key TEXT PRIMARY KEY, turn_id TEXT, call TEXT NOT NULL);
"""


class IndexUnavailable(OperationFailed):
    kind = "memory_index_unavailable"


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # SQLite keeps the mode
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def _valid(conn: sqlite3.Connection, agent_id: str) -> bool:
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
        return False
    row = conn.execute("SELECT value FROM meta WHERE key = 'agent_id'").fetchone()
    return row is not None and row[0] == agent_id


def remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def create(home: Home) -> None:
    """A fresh, empty index in place of whatever was there. Caller holds the memory lock."""
    remove(home.memory_index)
    conn = connect(home.memory_index)
    try:
        conn.executescript(
            "BEGIN;"
            + DDL
            + f"PRAGMA user_version = {SCHEMA};"
            + "INSERT INTO meta VALUES ('agent_id', "
            + _sql_str(home.agent_id)
            + ");COMMIT;"
        )
    finally:
        conn.close()


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _valid_connection(home: Home) -> sqlite3.Connection | None:
    """A connection to a usable index (this schema, this agent), or None."""
    if not home.memory_index.exists():
        return None
    try:
        conn = connect(home.memory_index)
    except sqlite3.DatabaseError:
        return None
    try:
        if _valid(conn, home.agent_id):
            return conn
    except sqlite3.DatabaseError:
        pass
    conn.close()
    return None


def open_index(home: Home) -> sqlite3.Connection:
    """A connection to a usable index, created (under the writer lock) when there is none."""
    conn = _valid_connection(home)
    if conn is None:
        with writer(home):
            conn = _valid_connection(home)
            if conn is None:
                create(home)
                conn = connect(home.memory_index)
    return conn


@contextmanager
def writer(home: Home) -> Iterator[None]:
    home.locks.mkdir(parents=True, exist_ok=True)
    with locked(home.memory_lock, timeout=120.0):
        yield


def write_failure(exc: sqlite3.Error) -> bool:
    """Errors that a rebuild cannot cure: the disk, permissions, or another writer."""
    text = str(exc).lower()
    return any(w in text for w in ("full", "readonly", "read-only", "locked", "busy", "i/o"))


def unavailable(home: Home, exc: BaseException) -> IndexUnavailable:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if isinstance(exc, LockBusy):
        why = "another process has held its lock for two minutes"
    return IndexUnavailable(
        f"memory index {home.memory_index} cannot be used: {why}",
        hint=f"check free disk space and permissions, then `holon memory rebuild {home.agent_id}`",
    )


class Writer:
    """One connection's writes: upserts and deletes of docs with their FTS projection."""

    def __init__(self, conn: sqlite3.Connection, home: Home) -> None:
        self.conn = conn
        self.home = home
        self.agent_id = home.agent_id

    def upsert(self, doc: sources.Doc) -> None:
        ref = sources.source_ref(self.agent_id, doc.origin, doc.key)
        row = self.conn.execute("SELECT id FROM docs WHERE ref = ?", (ref,)).fetchone()
        title, body = project.clean(doc.title), project.clean(doc.body)
        values = (
            doc.origin,
            doc.kind,
            doc.scope_kind,
            doc.workspace_id and project.clean(doc.workspace_id),
            self.agent_id,
            project.clean(doc.source_path),
            title,
            body,
            project.clean(doc.updated_at),
            project.clean(json.dumps(doc.metadata, ensure_ascii=False, sort_keys=True)),
            doc.turn_id and project.clean(doc.turn_id),
            doc.rank_kind,
        )
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO docs(ref, origin, kind, scope_kind, workspace_id, agent_id,"
                " source_path, title, body, updated_at, metadata, turn_id, rank_kind)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (ref, *values),
            )
            rowid = cur.lastrowid
        else:
            rowid = row[0]
            self.conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            self.conn.execute(
                "UPDATE docs SET origin=?, kind=?, scope_kind=?, workspace_id=?, agent_id=?,"
                " source_path=?, title=?, body=?, updated_at=?, metadata=?, turn_id=?,"
                " rank_kind=? WHERE id = ?",
                (*values, rowid),
            )
        self.conn.execute(
            "INSERT INTO fts(rowid, title, body) VALUES (?,?,?)",
            (rowid, project.project(title), project.project(body)),
        )

    def drop_origin(self, origin: str) -> None:
        self.conn.execute(
            "DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE origin = ?)", (origin,)
        )
        self.conn.execute("DELETE FROM docs WHERE origin = ?", (origin,))

    def source(self, name: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM sources WHERE name = ?", (name,)).fetchone()

    def set_source(self, name: str, **fields: Any) -> None:
        cols = ["name", *fields]
        self.conn.execute(
            f"INSERT OR REPLACE INTO sources({', '.join(cols)}) VALUES "
            f"({', '.join('?' for _ in cols)})",
            (name, *fields.values()),
        )


def txn(w: Writer, fn: Callable[[], Any]) -> None:
    w.conn.execute("BEGIN IMMEDIATE")
    try:
        fn()
    except BaseException:
        w.conn.execute("ROLLBACK")
        raise
    w.conn.execute("COMMIT")

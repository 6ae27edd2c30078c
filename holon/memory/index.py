"""The memory index: `.holon/indexes/memory.sqlite3`, SQLite FTS5 over the agent's memory.

Disposable: every row is derived from a stronger source (sources.py) and the whole file can be
deleted at any time. Each search first brings the index up to date, cheaply: ledgers are
append-only, so only the bytes past the offset recorded for each are read (a ledger that shrank
or whose head changed is re-read from the start); memory files are hash-checked; `memory.dirty`,
set by the runtime after writes that change a source, forces the full check of every tracked
file. A missing, corrupt or older-schema index is rebuilt on the spot. Writers serialise on
`locks/memory.lock`; each chunk of catch-up commits with its offset, so a crash loses nothing
and repeats nothing. When the index cannot be written (a full disk, say), search answers from
what it has and says the results may be stale.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from holon import clock, confined
from holon.errors import InvalidInput, OperationFailed, UsageError
from holon.home.layout import Home
from holon.memory import DEFAULT_CHARS, DEFAULT_LIMIT, MAX_CHARS, MAX_LIMIT, project, sources
from holon.store import jsonl, segments
from holon.store.locks import LockBusy, locked

T = TypeVar("T")
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
SCHEMA = 1
CHUNK_BYTES = 4 << 20  # ledger bytes read and committed per step of catch-up
HEAD_BYTES = 4096  # the bytes before the indexed offset, hashed to notice a replaced ledger
TRACKED_BYTES = 4 << 20  # of a memory file or the workspace profile: the rest is not indexed
HASH_ALWAYS_BYTES = 1 << 20  # memory files up to this size are hashed on every search
MAX_MEMORY_FILES = 100
ALWAYS_HASHED = ("memory/self.md", "memory/operator.md")
BM25_WEIGHTS = (2.0, 1.0)  # title, body
RANKED_MATCHES = 5_000  # matches of one query ranked by bm25, newest first beyond that

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
  metadata TEXT NOT NULL
);
CREATE INDEX docs_origin ON docs(origin);
CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');
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


class SourceNotFound(UsageError):
    kind = "memory_source_not_found"


class IndexUnavailable(OperationFailed):
    kind = "memory_index_unavailable"


# ---- opening, creating, rebuilding -------------------------------------------------------------


def _connect(path: Path) -> sqlite3.Connection:
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


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def _create(home: Home) -> None:
    """A fresh, empty index in place of whatever was there. Caller holds the memory lock."""
    _remove(home.memory_index)
    conn = _connect(home.memory_index)
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
        conn = _connect(home.memory_index)
    except sqlite3.DatabaseError:
        return None
    try:
        if _valid(conn, home.agent_id):
            return conn
    except sqlite3.DatabaseError:
        pass
    conn.close()
    return None


def _open(home: Home) -> sqlite3.Connection:
    """A connection to a usable index, created (under the writer lock) when there is none."""
    conn = _valid_connection(home)
    if conn is None:
        with _writer(home):
            conn = _valid_connection(home)
            if conn is None:
                _create(home)
                conn = _connect(home.memory_index)
    return conn


@contextmanager
def _writer(home: Home) -> Iterator[None]:
    home.locks.mkdir(parents=True, exist_ok=True)
    with locked(home.memory_lock, timeout=120.0):
        yield


def _write_failure(exc: sqlite3.Error) -> bool:
    """Errors that a rebuild cannot cure: the disk, permissions, or another writer."""
    text = str(exc).lower()
    return any(w in text for w in ("full", "readonly", "read-only", "locked", "busy", "i/o"))


# ---- catch-up ----------------------------------------------------------------------------------


class _Writer:
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
        )
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO docs(ref, origin, kind, scope_kind, workspace_id, agent_id,"
                " source_path, title, body, updated_at, metadata)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (ref, *values),
            )
            rowid = cur.lastrowid
        else:
            rowid = row[0]
            self.conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            self.conn.execute(
                "UPDATE docs SET origin=?, kind=?, scope_kind=?, workspace_id=?, agent_id=?,"
                " source_path=?, title=?, body=?, updated_at=?, metadata=? WHERE id = ?",
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


class _Ledger:
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

    def reset(self, w: _Writer) -> None:
        w.drop_origin(self.name)

    def records(self, w: _Writer, recs: list[dict[str, Any]]) -> None:
        for rec in recs:
            if self.build is not None and (doc := _doc(self.build, rec, self.rel)):
                w.upsert(doc)


class _WorkItems(_Ledger):
    def reset(self, w: _Writer) -> None:
        super().reset(w)
        w.conn.execute("DELETE FROM sources WHERE name LIKE 'plan:%'")

    def records(self, w: _Writer, recs: list[dict[str, Any]]) -> None:
        latest = {r["id"]: r for r in recs if isinstance(r.get("id"), str)}
        for rec in latest.values():
            index_work_item(w, rec)


def index_work_item(w: _Writer, rec: dict[str, Any]) -> None:
    """A work item with its plan; an open item's plan file is tracked for hand edits. An id that
    is not a plain name (a hand-edited ledger) is indexed without a plan: ids never become
    paths outside work-items/."""
    st, raw = None, b""
    if _PLAIN_ID.fullmatch(rec["id"]):
        path = w.home.plan_path(rec["id"])
        st, raw = _lstat(path), _read_plan(w.home, path)
        if raw is None:
            st, raw = None, b""
    plan = raw.decode("utf-8", "replace") if st else None
    doc = _doc(sources.work_item_doc, rec, _rel(w.home, w.home.work_items), plan)
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


class _Transcript(_Ledger):
    """Messages and tool executions. A call is remembered (table `calls`) until its result comes
    back, even across catch-ups; a turn's terminal forgets whatever of it never came back."""

    def reset(self, w: _Writer) -> None:
        super().reset(w)
        w.conn.execute("DELETE FROM calls")
        w.conn.execute("DELETE FROM meta WHERE key = 'workspace'")

    def records(self, w: _Writer, recs: list[dict[str, Any]]) -> None:
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

    def _entry(self, w: _Writer, entry: dict[str, Any], workspace: str) -> str:
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

    def _remember(self, w: _Writer, entry: dict, key: str, call_id: Any, call: dict) -> None:
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

    def _result(self, w: _Writer, entry: dict, data: dict, workspace: str) -> None:
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


def _ledgers(home: Home) -> list[_Ledger]:
    return [
        _Ledger("briefs", home.briefs, _rel(home, home.briefs), sources.brief_doc),
        _Ledger(
            "episodes",
            home.context_episodes,
            _rel(home, home.context_episodes),
            sources.episode_doc,
        ),
        _WorkItems("work_items", home.work_items, _rel(home, home.work_items)),
        _Transcript("transcript", home.transcript, _rel(home, home.transcript)),
    ]


def _rel(home: Home, path: Path) -> str:
    """A source's path relative to the home, as results show it."""
    return path.relative_to(home.root).as_posix()


def _ledger_stale(w: _Writer, ledger: _Ledger) -> bool:
    row = w.source(ledger.name)
    size = jsonl.end_offset(ledger.path)  # logical: rotated segments included
    if row is None:
        return size > 0
    return size != row["offset"] or _moved(ledger.path, row)


def _catch_up_ledger(w: _Writer, ledger: _Ledger) -> None:
    """Index the complete lines past the recorded (logical) offset, one committed chunk at a
    time, following the ledger into its rotated segments."""
    size = jsonl.end_offset(ledger.path)
    row = w.source(ledger.name)
    offset = row["offset"] if row else 0
    if row is not None and (size < offset or _moved(ledger.path, row)):
        _txn(w, lambda: (ledger.reset(w), w.set_source(ledger.name)))
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


def _commit_chunk(w: _Writer, ledger: _Ledger, recs: list[dict], new: int) -> None:
    _txn(
        w,
        lambda: (
            ledger.records(w, recs),
            w.set_source(ledger.name, offset=new, size=new, digest=_head(ledger.path, new)),
        ),
    )


def _txn(w: _Writer, fn: Callable[[], Any]) -> None:
    w.conn.execute("BEGIN IMMEDIATE")
    try:
        fn()
    except BaseException:
        w.conn.execute("ROLLBACK")
        raise
    w.conn.execute("COMMIT")


# ---- tracked files: memory Markdown, the workspace profile, open plans -------------------------


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
    out.append((_rel(home, home.workspace_json), home.workspace_json, "workspace"))
    return out


def _file_changes(w: _Writer, *, force: bool) -> list[tuple[str, Path, str, bytes | None]]:
    """Tracked files whose content differs from what is indexed (None: the file is gone)."""
    changes: list[tuple[str, Path, str, bytes | None]] = []
    present = set()
    for rel, path, kind in _tracked_files(w.home):
        row = w.source(f"file:{rel}")
        st = _lstat(path)
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


def _sync_file(w: _Writer, rel: str, path: Path, kind: str, data: bytes | None) -> None:
    w.drop_origin(f"file:{rel}")
    if data is None:
        w.conn.execute("DELETE FROM sources WHERE name = ?", (f"file:{rel}",))
        return
    text = data.decode("utf-8", "replace")
    st = _lstat(path)
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


def _plan_changes(w: _Writer, *, force: bool) -> list[dict[str, Any]]:
    """Open work items whose plan file changed since they were indexed: by size or mtime, and
    with `force` by content too."""
    out = []
    for row in w.conn.execute("SELECT * FROM sources WHERE name LIKE 'plan:%'").fetchall():
        rec = json.loads(row["extra"])
        if not _PLAIN_ID.fullmatch(str(rec.get("id"))):
            continue  # indexed without a plan (index_work_item): its id never becomes a path
        path = w.home.plan_path(rec["id"])
        st = _lstat(path)
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
    try:
        found = confined.read(
            home.root, path.relative_to(home.root), sources.MAX_BODY * 4, truncate=True
        )
    except confined.Refused:
        return None
    return None if found is None else found.data


def _lstat(path: Path) -> os.stat_result | None:
    """The file's own stat, never its symlink target's (a change check only: reads are
    confined)."""
    try:
        return os.stat(path, follow_symlinks=False)
    except OSError:
        return None


# ---- the session: open, repair, bring up to date -----------------------------------------------


def _stale(w: _Writer, *, force: bool) -> bool:
    return (
        force
        or any(_ledger_stale(w, led) for led in _ledgers(w.home))
        or bool(_file_changes(w, force=False))
        or bool(_plan_changes(w, force=False))
    )


def _refresh(conn: sqlite3.Connection, home: Home) -> None:
    """Bring the index up to date with its sources (the lock is taken only if anything
    changed)."""
    dirty = home.memory_dirty.exists()
    w = _Writer(conn, home)
    if not _stale(w, force=dirty):
        return
    with _writer(home):
        for ledger in _ledgers(home):
            _catch_up_ledger(w, ledger)
        files = _file_changes(w, force=dirty)
        plans = _plan_changes(w, force=dirty)
        if files or plans:
            _txn(
                w,
                lambda: (
                    [_sync_file(w, *change) for change in files],
                    [index_work_item(w, rec) for rec in plans],
                ),
            )
        if dirty:
            try:
                os.unlink(home.memory_dirty)
            except FileNotFoundError:
                pass


def _with_index(home: Home, fn: Callable[[sqlite3.Connection, bool], T]) -> T:
    """Run `fn(conn, stale)` on an up-to-date index; a missing, corrupt or foreign index is
    rebuilt once; an index that cannot be brought up to date is read as it is (stale=True)."""
    try:
        for attempt in (1, 2):
            conn = _open(home)
            try:
                stale = False
                try:
                    _refresh(conn, home)
                except sqlite3.Error as exc:
                    if not _write_failure(exc):
                        raise
                    stale = True
                except (OSError, LockBusy):
                    stale = True
                return fn(conn, stale)
            except sqlite3.Error as exc:
                if attempt == 2 or _write_failure(exc):
                    raise _unavailable(home, exc) from None
                with _writer(home):
                    _remove(home.memory_index)
            finally:
                conn.close()
    except (OSError, LockBusy) as exc:
        raise _unavailable(home, exc) from None
    raise AssertionError("unreachable")


def _unavailable(home: Home, exc: BaseException) -> IndexUnavailable:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if isinstance(exc, LockBusy):
        why = "another process has held its lock for two minutes"
    return IndexUnavailable(
        f"memory index {home.memory_index} cannot be used: {why}",
        hint=f"check free disk space and permissions, then `holon memory rebuild {home.agent_id}`",
    )


# ---- the public surface ------------------------------------------------------------------------


def _workspace(home: Home) -> str:
    from holon.agent.handle import Agent

    try:
        return Agent(home).state().active_workspace_id or sources.DEFAULT_WORKSPACE
    except Exception:  # a damaged state file must not stop recall
        return sources.DEFAULT_WORKSPACE


def _provenance(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "kind": row["kind"],
        "source_ref": row["ref"],
        "scope_kind": row["scope_kind"],
        "workspace_id": row["workspace_id"],
        "agent_id": row["agent_id"],
        "source_path": row["source_path"],
        "title": row["title"],
        "updated_at": row["updated_at"],
        "metadata": json.loads(row["metadata"]),
    }


def search(
    home: Home,
    text: str,
    *,
    limit: int = DEFAULT_LIMIT,
    include_all_workspaces: bool = False,
    workspace_id: str | None = None,
) -> dict[str, Any]:
    """Ranked matches (bm25, title weighted over body; newer first among equals) in the active
    workspace plus agent-scoped memory. When no record has every word, records with any of them
    are returned (`match: "any"`)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(
            f"limit {limit} is out of range",
            kind="invalid_query",
            hint=f"use a limit from 1 to {MAX_LIMIT}",
        )
    query = project.parse(text)
    workspace = None if include_all_workspaces else (workspace_id or _workspace(home))

    def run(conn: sqlite3.Connection, stale: bool) -> dict[str, Any]:
        match = "all"
        rows = _match(conn, query.expression(), workspace, limit)
        if not rows and query.atoms > 1:
            match = "any"
            rows = _match(conn, query.expression(any_term=True), workspace, limit)
        results = []
        for row, rank in rows:
            item = _provenance(row)
            item["snippet"] = project.snippet(row["body"], query.needles)
            item["score"] = round(-rank, 4)
            results.append(item)
        doc: dict[str, Any] = {
            "query": text,
            "scope": {"workspace_id": workspace, "include_all_workspaces": workspace is None},
            "match": match,
            "results": results,
        }
        if stale:
            doc["stale"] = True
        return doc

    return _with_index(home, run)


def _match(
    conn: sqlite3.Connection, expr: str, workspace: str | None, limit: int
) -> list[tuple[sqlite3.Row, float]]:
    """The best `limit` matches. bm25 costs one evaluation per matching record, so a query that
    matches more than RANKED_MATCHES records ranks the newest RANKED_MATCHES of them (an
    unselective query is answered from recent memory); if that leaves too few in scope, all."""
    row = conn.execute(
        "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expr, RANKED_MATCHES - 1),
    ).fetchone()
    ranked = _ranked(conn, expr, workspace, limit, since=row[0] if row else None)
    if row is not None and len(ranked) < limit:
        ranked = _ranked(conn, expr, workspace, limit, since=None)
    out = []
    for rowid, rank in ranked:
        doc = conn.execute("SELECT * FROM docs WHERE id = ?", (rowid,)).fetchone()
        out.append((doc, rank))
    return out


def _ranked(
    conn: sqlite3.Connection, expr: str, workspace: str | None, limit: int, since: int | None
) -> list[tuple[int, float]]:
    scope = "" if workspace is None else "WHERE (d.scope_kind = 'agent' OR d.workspace_id = ?)"
    w_title, w_body = BM25_WEIGHTS
    params: list[Any] = [expr]
    bound = ""
    if since is not None:
        bound, params = "AND rowid >= ?", [expr, since]
    if workspace is not None:
        params.append(workspace)
    return conn.execute(
        f"SELECT d.id, m.rank FROM (SELECT rowid, bm25(fts, {w_title}, {w_body}) AS rank"
        f" FROM fts WHERE fts MATCH ? {bound}) m JOIN docs d ON d.id = m.rowid {scope}"
        " ORDER BY m.rank, d.updated_at DESC, d.id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()


def get(home: Home, ref: str, *, max_chars: int = DEFAULT_CHARS) -> dict[str, Any]:
    """The exact body of one indexed record, bounded to `max_chars`, with its provenance."""
    if not 1 <= max_chars <= MAX_CHARS:
        raise InvalidInput(
            f"max_chars {max_chars} is out of range",
            kind="invalid_query",
            hint=f"use max_chars from 1 to {MAX_CHARS}",
        )

    def run(conn: sqlite3.Connection, stale: bool) -> dict[str, Any]:
        row = conn.execute("SELECT * FROM docs WHERE ref = ?", (ref,)).fetchone()
        if row is None:
            raise SourceNotFound(
                f"no memory source {ref[:80]!r}",
                hint="copy a source_ref from a MemorySearch result (refs are not paths)",
            )
        body = row["body"]
        doc = _provenance(row)
        doc["content"] = body[:max_chars]
        doc["truncated"] = len(body) > max_chars
        doc["total_chars"] = len(body)
        if stale:
            doc["stale"] = True
        return doc

    return _with_index(home, run)


def rebuild(home: Home) -> dict[str, Any]:
    """Delete the index and build it again from its sources."""
    try:
        with _writer(home):
            _create(home)
            try:
                os.unlink(home.memory_dirty)
            except FileNotFoundError:
                pass
    except (OSError, LockBusy, sqlite3.Error) as exc:
        raise _unavailable(home, exc) from None
    return status(home)


def status(home: Home) -> dict[str, Any]:
    """What the index holds, by kind (brought up to date first)."""

    def run(conn: sqlite3.Connection, stale: bool) -> dict[str, Any]:
        kinds = dict(conn.execute("SELECT kind, count(*) FROM docs GROUP BY kind ORDER BY kind"))
        doc = {
            "agent_id": home.agent_id,
            "path": str(home.memory_index),
            "schema": SCHEMA,
            "documents": sum(kinds.values()),
            "by_kind": kinds,
            "bytes": home.memory_index.stat().st_size,
        }
        if stale:
            doc["stale"] = True
        return doc

    return _with_index(home, run)

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

This module is the session (open, repair, bring up to date) and the public surface (`search`,
`get`, `rebuild`, `status`); the file and its tables are schema.py, the catch-up of the ledgers
and open plans catchup.py, of the files indexed whole files.py, and the ranked queries ranking.py.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from holon.errors import InvalidInput, UsageError
from holon.home.layout import Home
from holon.memory import (
    DEFAULT_CHARS,
    DEFAULT_LIMIT,
    MAX_CHARS,
    MAX_LIMIT,
    catchup,
    files,
    project,
    ranking,
    schema,
)
from holon.memory.schema import SCHEMA, IndexUnavailable
from holon.store.locks import LockBusy

__all__ = ["SCHEMA", "IndexUnavailable", "SourceNotFound", "get", "rebuild", "search", "status"]

T = TypeVar("T")
THIN = 5  # fewer results than this with every word: records with some of them are ranked too


class SourceNotFound(UsageError):
    kind = "memory_source_not_found"


# ---- the session: open, repair, bring up to date -----------------------------------------------


def _stale(w: schema.Writer, *, force: bool) -> bool:
    return (
        force
        or any(catchup.ledger_stale(w, led) for led in catchup.ledgers(w.home))
        or bool(files.file_changes(w, force=False))
        or bool(catchup.plan_changes(w, force=False))
    )


def _refresh(conn: sqlite3.Connection, home: Home) -> None:
    """Bring the index up to date with its sources (the lock is taken only if anything
    changed)."""
    dirty = home.memory_dirty.exists()
    w = schema.Writer(conn, home)
    if not _stale(w, force=dirty):
        return
    with schema.writer(home):
        for ledger in catchup.ledgers(home):
            catchup.catch_up_ledger(w, ledger)
        changed = files.file_changes(w, force=dirty)
        plans = catchup.plan_changes(w, force=dirty)
        if changed or plans:
            schema.txn(
                w,
                lambda: (
                    [files.sync_file(w, *change) for change in changed],
                    [catchup.index_work_item(w, rec) for rec in plans],
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
            conn = schema.open_index(home)
            try:
                stale = False
                try:
                    _refresh(conn, home)
                except sqlite3.Error as exc:
                    if not schema.write_failure(exc):
                        raise
                    stale = True
                except (OSError, LockBusy):
                    stale = True
                return fn(conn, stale)
            except sqlite3.Error as exc:
                if attempt == 2 or schema.write_failure(exc):
                    raise schema.unavailable(home, exc) from None
                with schema.writer(home):
                    schema.remove(home.memory_index)
            finally:
                conn.close()
    except (OSError, LockBusy) as exc:
        raise schema.unavailable(home, exc) from None
    raise AssertionError("unreachable")


# ---- the public surface ------------------------------------------------------------------------


def search(
    home: Home,
    text: str,
    *,
    limit: int = DEFAULT_LIMIT,
    include_all_workspaces: bool = False,
    workspace_id: str | None = None,
    exclude_turn: str | None = None,
) -> dict[str, Any]:
    """Ranked matches (ranking.py: bm25, title over body, weighted by kind; newer first among
    equals) in the active workspace plus agent-scoped memory, without the records of
    `exclude_turn` (the searching turn: its own message and unsettled tool executions).
    Stopwords are dropped from a query that has other words. When fewer than THIN records
    have every word, the records with any of its selective words are ranked together
    (`match: "any"`; each result says whether it had `all` words or `some`)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(
            f"limit {limit} is out of range",
            kind="invalid_query",
            hint=f"use a limit from 1 to {MAX_LIMIT}",
        )
    query = project.parse(text)
    workspace = None if include_all_workspaces else (workspace_id or ranking.workspace(home))

    def run(conn: sqlite3.Connection, stale: bool) -> dict[str, Any]:
        rank = functools.partial(
            ranking.match, conn, workspace=workspace, limit=limit, exclude_turn=exclude_turn
        )
        rows = rank(query.expression())
        match, every = "all", {row["id"] for row, _ in rows}
        terms = query.terms()
        if len(rows) < min(limit, THIN) and len(terms) > 1:
            more = rank(query.any_of(_selective(conn, terms)))
            if any(row["id"] not in every for row, _ in more):
                match, rows = "any", more
        results = []
        for row, score in rows:
            item = ranking.provenance(row)
            item["snippet"] = project.snippet(row["body"], query.searched)
            item["score"] = round(-score, 4)
            if match == "any":
                item["matched"] = "all" if row["id"] in every else "some"
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


def _selective(conn: sqlite3.Connection, terms: list[str]) -> list[str]:
    """The terms of an any-word match that narrow it: a word held by more than
    ranking.RANKED_MATCHES records is dropped when a rarer one remains (it says little about
    which record is meant, and would flood the candidates with recent records)."""
    rare = [t for t in terms if not ranking.common(conn, t)]
    return rare or terms


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
        doc = ranking.provenance(row)
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
        with schema.writer(home):
            schema.create(home)
            try:
                os.unlink(home.memory_dirty)
            except FileNotFoundError:
                pass
    except (OSError, LockBusy, sqlite3.Error) as exc:
        raise schema.unavailable(home, exc) from None
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

"""Ranked recall over the memory index: bm25 with the title weighted over the body, newer first
among equals, scoped to a workspace plus agent-wide memory; and the provenance each result
carries."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from holon.home.layout import Home
from holon.memory import sources

BM25_WEIGHTS = (2.0, 1.0)  # title, body
RANKED_MATCHES = 5_000  # matches of one query ranked by bm25, newest first beyond that


def workspace(home: Home) -> str:
    """The agent's active workspace: a search's scope unless it names one."""
    from holon.agent.handle import Agent

    try:
        return Agent(home).state().active_workspace_id or sources.DEFAULT_WORKSPACE
    except Exception:  # a damaged state file must not stop recall
        return sources.DEFAULT_WORKSPACE


def provenance(row: sqlite3.Row) -> dict[str, Any]:
    """Where an indexed record comes from, as search and get report it."""
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


def match(
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

"""Ranked recall over the memory index: bm25 with the title weighted over the body, times a weight
per kind of record (what states facts above the questions that asked for them), newer first
among equals; scoped to a workspace plus agent-wide memory, without the searching turn's own
records; and the provenance each result carries."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from holon.home import stateview
from holon.home.layout import Home
from holon.memory import sources

BM25_WEIGHTS = (2.0, 1.0)  # title, body
RANKED_MATCHES = 2_000  # matches of one query ranked by bm25, newest first beyond that
# bm25 is multiplied by the weight of a record's rank_kind (sources.Doc.rank_kind); a kind not
# listed weighs 1.0. What the agent wrote down or concluded ranks above what it was asked.
KIND_WEIGHTS: dict[str, float] = {
    "memory_file": 1.5,
    "brief": 1.3,
    "workspace": 1.2,
    "work_item": 1.2,
    "episode": 1.1,  # a summary of turns whose messages and commands are indexed too
    "message": 1.1,
    "tool_execution": 1.0,  # the bulk of a long life, mostly incidental
    sources.QUESTION: 0.4,
}


def _weight_sql() -> str:
    """KIND_WEIGHTS as an SQL expression over `d.rank_kind` (constants of this module only)."""
    cases = " ".join(
        f"WHEN '{kind.replace(chr(39), chr(39) * 2)}' THEN {float(weight)!r}"
        for kind, weight in KIND_WEIGHTS.items()
    )
    return f"(CASE d.rank_kind {cases} ELSE 1.0 END)"


def workspace(home: Home) -> str:
    """The agent's active workspace: a search's scope unless it names one. Read from the stored
    state without pydantic when it is current (holon.home.stateview), else the full read."""
    try:
        view = stateview.current(home)
        if view is not None:
            return view["active_workspace_id"] or sources.DEFAULT_WORKSPACE
        from holon.agent.handle import Agent

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


def common(conn: sqlite3.Connection, atom: str) -> bool:
    """Whether more than RANKED_MATCHES records hold `atom` (counted no further than that)."""
    row = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)",
        (atom, RANKED_MATCHES + 1),
    ).fetchone()
    return row[0] > RANKED_MATCHES


def match(
    conn: sqlite3.Connection,
    expr: str,
    workspace: str | None,
    limit: int,
    *,
    exclude_turn: str | None = None,
) -> list[tuple[sqlite3.Row, float]]:
    """The best `limit` matches, by weighted bm25. bm25 costs one evaluation per matching
    record, so a query that matches more than RANKED_MATCHES records ranks the newest
    RANKED_MATCHES of them (an unselective query is answered from recent memory); if that
    leaves too few in scope, all. Records of `exclude_turn` (the searching turn) are left out."""
    row = conn.execute(
        "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expr, RANKED_MATCHES - 1),
    ).fetchone()
    ranked = _ranked(conn, expr, workspace, limit, row[0] if row else None, exclude_turn)
    if row is not None and len(ranked) < limit:
        ranked = _ranked(conn, expr, workspace, limit, None, exclude_turn)
    out = []
    for rowid, score in ranked:
        doc = conn.execute("SELECT * FROM docs WHERE id = ?", (rowid,)).fetchone()
        out.append((doc, score))
    return out


def _ranked(
    conn: sqlite3.Connection,
    expr: str,
    workspace: str | None,
    limit: int,
    since: int | None,
    exclude_turn: str | None,
) -> list[tuple[int, float]]:
    where, params = ["1"], []
    if workspace is not None:
        where.append("(d.scope_kind = 'agent' OR d.workspace_id = ?)")
        params.append(workspace)
    if exclude_turn:
        where.append("(d.turn_id IS NULL OR d.turn_id != ?)")
        params.append(exclude_turn)
    bound = "" if since is None else "AND rowid >= ?"
    w_title, w_body = BM25_WEIGHTS
    return conn.execute(
        f"SELECT d.id, m.rank * {_weight_sql()} AS score"
        f" FROM (SELECT rowid, bm25(fts, {w_title}, {w_body}) AS rank"
        f" FROM fts WHERE fts MATCH ? {bound}) m JOIN docs d ON d.id = m.rowid"
        f" WHERE {' AND '.join(where)} ORDER BY score, d.updated_at DESC, d.id DESC LIMIT ?",
        (expr, *([since] if since is not None else []), *params, limit),
    ).fetchall()

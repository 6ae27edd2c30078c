"""The per-server tool list cache (`.holon/indexes/mcp/<server>.json`): what the server listed,
under the digest of its configuration and the version it reported, so the catalog (and the
prompt cache key) stays the same across ticks and a tick that calls no MCP tool starts no
server. A server that failed keeps its last error beside no tools; the next turn tries again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon import clock, jsonfile
from holon.home.layout import Home
from holon.mcp.config import Server
from holon.store.atomic import write_json

SCHEMA = 1


def _path(home: Home, server: Server) -> Path:
    return home.mcp_cache / f"{server.name}.json"


def read(home: Home, server: Server) -> dict[str, Any] | None:
    """The cached entry of `server`, or None (missing, unreadable, or for another config)."""
    try:
        entry = jsonfile.object_of(_path(home, server))
    except (jsonfile.Unreadable, OSError):
        return None
    if not entry or entry.get("schema") != SCHEMA or entry.get("digest") != server.digest:
        return None
    return entry


def fresh(entry: dict[str, Any] | None) -> bool:
    """Does the entry hold a tool list (not just an error)?"""
    return bool(entry) and entry.get("error") is None


def store(
    home: Home,
    server: Server,
    *,
    version: str | None,
    tools: list[dict[str, Any]] | None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record a listing (or a failure, keeping the last good tools) and return the entry."""
    old = read(home, server) or {}
    entry = {
        "schema": SCHEMA,
        "server": server.name,
        "digest": server.digest,
        "server_version": version if tools is not None else old.get("server_version"),
        "tools": tools if tools is not None else old.get("tools", []),
        "listed_at": clock.now_iso() if tools is not None else old.get("listed_at"),
        "error": error,
        "checked_ts": clock.now_ts(),
    }
    home.mcp_cache.mkdir(parents=True, exist_ok=True)
    write_json(_path(home, server), entry)
    return entry

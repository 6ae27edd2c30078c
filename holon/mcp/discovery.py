"""The MCP tools an agent sees, and one call to one of them.

1. `tools(home, ...)`: for each server the agent uses (holon.mcp.config.for_agent), the cached
   listing when its digest matches (no server starts), else the server is started and listed
   and the cache written; a server that failed is retried after RETRY_S, and offers no tools
   meanwhile; two tools mapping to one model name refuse that server's listing.
2. `call(...)`: the server's connection for this tick (holon.mcp.pool), started on first use; a
   server now reporting another version is listed again (the catalog changes from the next request).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon import clock
from holon.home.layout import Home
from holon.mcp import cache, config, names, pool
from holon.mcp.config import Server
from holon.mcp.failure import UNAVAILABLE, McpFailure

RETRY_S = 300
# what one server may put in every prompt: more tools, longer descriptions or larger schemas
# are left out (a server's listing is untrusted input)
MAX_TOOLS = 128
MAX_DESCRIPTION = 2000
MAX_SCHEMA_BYTES = 32_768
COLLISION = "mcp_tool_name_collision"


@dataclass(frozen=True)
class Spec:
    """One MCP tool as the model sees it."""

    model_name: str
    server: Server
    tool: str
    description: str
    input_schema: dict[str, Any]


def _retry_due(entry: dict[str, Any]) -> bool:
    return clock.now_ts() - float(entry.get("checked_ts") or 0) >= RETRY_S


def listing(
    home: Home,
    server: Server,
    root: Path,
    cwd: Path,
    *,
    refresh: bool = False,
    failed: list[dict[str, Any]] | None = None,
) -> dict:
    """The server's cache entry, listing it first when the cache cannot answer; a listing that
    failed just now is appended to `failed`."""
    entry = cache.read(home, server)
    if entry is not None and not refresh and (cache.fresh(entry) or not _retry_due(entry)):
        return entry
    entry = _list(home, server, root, cwd)
    if entry.get("error") and failed is not None:
        failed.append({"server": server.name, **entry["error"]})
    return entry


def _list(home: Home, server: Server, root: Path, cwd: Path) -> dict:
    try:
        conn = pool.connection(server, home, root, cwd)
        listed = conn.list_tools()
    except McpFailure as exc:
        pool.drop(server, home)
        return cache.store(home, server, version=None, tools=None, error=exc.to_record())
    try:
        names.assign(server.name, [t.get("name", "") for t in listed], set())
    except names.Collision as exc:
        error = {"kind": COLLISION, "message": str(exc), "details": {"server": server.name}}
        return cache.store(home, server, version=conn.version, tools=[], error=error)
    return cache.store(home, server, version=conn.version, tools=listed)


def probe(home: Home, server: Server, root: Path, cwd: Path) -> dict[str, Any]:
    """Start and list the server now, writing nothing: {version, tools}; McpFailure."""
    try:
        conn = pool.connection(server, home, root, cwd)
        return {"version": conn.version, "tools": len(conn.list_tools())}
    finally:
        pool.drop(server, home)


def _fits(tool: Any) -> bool:
    """A listed tool with a name and an object schema of bounded size."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        return False
    schema = tool.get("inputSchema", {"type": "object"})
    if not isinstance(schema, dict):
        return False
    return len(json.dumps(schema, default=str)) <= MAX_SCHEMA_BYTES


def specs(server: Server, entry: dict[str, Any], taken: set[str]) -> list[Spec]:
    """The tools of one listing that the server's filter lets through, named for the model."""
    if entry.get("error") and entry["error"].get("kind") == COLLISION:
        return []
    listed = [t for t in entry.get("tools") or [] if _fits(t)]
    listed = [t for t in listed if server.offers(t["name"])][:MAX_TOOLS]
    mapping = names.assign(server.name, [t["name"] for t in listed], taken)
    by_tool = {t["name"]: t for t in listed}
    return [
        Spec(
            model_name=model,
            server=server,
            tool=tool,
            description=str(by_tool[tool].get("description") or tool)[:MAX_DESCRIPTION],
            input_schema=by_tool[tool].get("inputSchema") or {"type": "object"},
        )
        for model, tool in mapping.items()
    ]


def tools(
    home: Home,
    root: Path,
    cwd: Path,
    *,
    refresh: bool = False,
    failed: list[dict[str, Any]] | None = None,
) -> list[Spec]:
    """Every MCP tool this agent sees, in server then tool order; listings that failed just now
    are appended to `failed`."""
    out: list[Spec] = []
    taken: set[str] = set()
    for server in config.for_agent(home):
        entry = listing(home, server, root, cwd, refresh=refresh, failed=failed)
        try:
            found = specs(server, entry, taken)
        except names.Collision as exc:  # across servers: the later server is refused
            error = {"kind": COLLISION, "message": str(exc), "details": {"server": server.name}}
            cache.store(home, server, version=entry.get("server_version"), tools=[], error=error)
            continue
        taken |= {s.model_name for s in found}
        out += found
    return out


def find(home: Home, model_name: str) -> Spec | None:
    """The spec behind a model-visible name, from the cache only (no server starts)."""
    taken: set[str] = set()
    for server in config.for_agent(home):
        entry = cache.read(home, server)
        if entry is None:
            continue
        try:
            found = specs(server, entry, taken)
        except names.Collision:
            continue
        for spec in found:
            if spec.model_name == model_name:
                return spec
        taken |= {s.model_name for s in found}
    return None


def call(home: Home, root: Path, cwd: Path, spec: Spec, arguments: dict[str, Any]) -> dict:
    """The server's CallToolResult (a dict); McpFailure when the server fails."""
    server = spec.server
    try:
        conn = pool.connection(server, home, root, cwd)
        result = conn.call(spec.tool, arguments)
    except McpFailure as exc:
        pool.drop(server, home)
        if exc.kind == UNAVAILABLE:  # `holon mcp list` shows it; the tools stay listed
            cache.store(home, server, version=None, tools=None, error=exc.to_record())
        raise
    entry = cache.read(home, server)
    if entry is not None and conn.version != entry.get("server_version"):
        listing(home, server, root, cwd, refresh=True)
    return result

"""The servers a tick has started, kept open until the tick ends (`close_all`). Imports no SDK:
the runtime calls `close_all` at every tick's end, and only a tick that opened a connection
ever loads holon.mcp.client."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from holon.home.layout import Home
from holon.mcp.config import Server

_OPEN: dict[tuple[str, str], Any] = {}  # (home root, server digest) -> client.Connection


def connection(server: Server, home: Home, root: Path, cwd: Path) -> Any:
    """The open connection to `server` for this agent, started now if needed (McpFailure)."""
    key = (str(home.root), server.digest)
    found = _OPEN.get(key)
    if found is not None and found.alive:
        return found
    if found is not None:
        found.close()
        del _OPEN[key]
    from holon.mcp.client import Connection

    conn = Connection(server, home, root, cwd).open()
    _OPEN[key] = conn
    return conn


def drop(server: Server, home: Home) -> None:
    """Close one connection (after a timeout or garbage: the next call starts it again)."""
    conn = _OPEN.pop((str(home.root), server.digest), None)
    if conn is not None:
        conn.close()


def close_all() -> int:
    """Stop every server this process started; the number stopped."""
    count = 0
    while _OPEN:
        _, conn = _OPEN.popitem()
        conn.close()
        count += 1
    return count


atexit.register(close_all)

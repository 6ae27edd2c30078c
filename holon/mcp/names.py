"""Model-visible names of MCP tools: `mcp__<server>__<tool>`, characters outside [A-Za-z0-9_-]
mapped to `_`, at most 64 characters; two tools that map to one name are refused."""

from __future__ import annotations

import re

PREFIX = "mcp__"
MAX_LEN = 64
_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")


class Collision(ValueError):
    """Two tools of the catalog map to one model-visible name."""


def model_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server` (may be cut to MAX_LEN)."""
    return _OUTSIDE.sub("_", f"{PREFIX}{server}__{tool}")[:MAX_LEN]


def is_mcp(name: str) -> bool:
    return name.startswith(PREFIX)


def assign(server: str, tools: list[str], taken: set[str]) -> dict[str, str]:
    """{model name: tool name} for the tools of one server; Collision when two of them, or one
    of them and a name in `taken`, map to the same model name."""
    out: dict[str, str] = {}
    for tool in tools:
        name = model_name(server, tool)
        clash = out.get(name) or (name if name in taken else None)
        if clash is not None:
            raise Collision(
                f"MCP tools {clash!r} and {tool!r} of server {server!r} both map to {name!r}"
            )
        out[name] = tool
    return out

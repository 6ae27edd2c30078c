"""The operator's side of `holon mcp`: add or remove a server in config.toml (its other lines
and comments kept), and one status row per configured server from the agents' caches."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import asdict
from typing import Any

from holon import config
from holon.errors import UsageError
from holon.home.layout import Home
from holon.mcp import cache
from holon.mcp.config import agent_choice, check_name, parse, servers
from holon.paths import config_path
from holon.store.atomic import write_json, write_text


def _text() -> str:
    path = config_path()
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _save(text: str, name: str) -> None:
    """Write config.toml after checking the whole file still parses (nothing half-valid)."""
    try:
        tables = tomllib.loads(text).get("mcp_servers", {})
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{config_path()} would not be valid TOML: {exc}",
            kind="invalid_config",
            hint="edit config.toml by hand",
        ) from None
    if name in tables:
        parse(name, tables[name])
    config_path().parent.mkdir(parents=True, exist_ok=True)
    write_text(config_path(), text)
    config.reset()


def add(
    name: str,
    *,
    command: list[str] | None = None,
    url: str | None = None,
    env: dict[str, str] | None = None,
    bearer_token_env: str | None = None,
) -> dict[str, Any]:
    """Append `[mcp_servers.NAME]` to config.toml; the new server's table."""
    check_name(name)
    if any(s.name == name for s in servers()):
        raise UsageError(
            f"an MCP server named {name!r} is already configured",
            kind="mcp_server_exists",
            hint=f"remove it first: holon mcp remove {name}",
        )
    lines = [f"[mcp_servers.{name}]"]
    if command:
        lines += [f"command = {json.dumps(command[0])}"]
        if command[1:]:
            lines += [f"args = {json.dumps(command[1:], ensure_ascii=False)}"]
    if url:
        lines += [f"url = {json.dumps(url)}"]
    if bearer_token_env:
        lines += [f"bearer_token_env = {json.dumps(bearer_token_env)}"]
    if env:
        body = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(env.items()))
        lines += [f"env = {{ {body} }}"]
    text = _text()
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    _save(text + sep + "\n".join(lines) + "\n", name)
    return asdict(next(s for s in servers() if s.name == name))


def _header(line: str) -> str | None:
    """The dotted name of a `[table]` header line, or None."""
    m = re.match(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$", line)
    return re.sub(r'\s*\.\s*|"', lambda x: "." if "." in x.group(0) else "", m[1]) if m else None


def remove(name: str) -> None:
    """Remove `[mcp_servers.NAME]` (and its sub-tables) from config.toml."""
    check_name(name)
    if not any(s.name == name for s in servers()):
        raise UsageError(
            f"no MCP server named {name!r}",
            kind="unknown_mcp_server",
            hint="see the configured ones with `holon mcp list`",
        )
    out, skipping = [], False
    own = f"mcp_servers.{name}"
    for line in _text().splitlines(keepends=True):
        head = _header(line)
        if head is not None:
            skipping = head == own or head.startswith(own + ".")
        if not skipping:
            out.append(line)
    text = "".join(out)
    if name in tomllib.loads(text).get("mcp_servers", {}):
        raise UsageError(
            f"[mcp_servers.{name}] is not written as a table of its own in {config_path()}",
            kind="invalid_config",
            hint="remove it from config.toml by hand",
        )
    _save(text, name)


def choose(home: Home, name: str, *, on: bool, children: bool = False) -> dict[str, list[str]]:
    """Turn server NAME on or off for one agent in its `.holon/mcp.json` (with `children`: grant
    it to, or withdraw it from, the agent's private children); the new choice."""
    if not any(s.name == name for s in servers()):
        raise UsageError(
            f"no MCP server named {name!r}",
            kind="unknown_mcp_server",
            hint="see the configured ones with `holon mcp list`",
        )
    choice = agent_choice(home)
    keys = ("grant_children",) if children else ("enabled", "disabled")
    for key in keys:
        choice[key] = [n for n in choice[key] if n != name]
    if not children:
        choice["enabled" if on else "disabled"].append(name)
    elif on:
        choice["grant_children"].append(name)
    write_json(home.mcp_json, {k: sorted(v) for k, v in choice.items()})
    return choice


def rows(homes: list[Home]) -> list[dict[str, Any]]:
    """One row per configured server: transport, status, tool count and last error, from the
    newest cache entry any of `homes` holds for it."""
    out = []
    for server in servers():
        entries = [e for e in (cache.read(h, server) for h in homes) if e is not None]
        entry = max(entries, key=lambda e: e.get("checked_ts") or 0, default=None)
        if not server.enabled:
            status = "disabled"
        elif entry is None:
            status = "unknown"
        else:
            status = "error" if entry.get("error") else "ok"
        out.append(
            {
                "name": server.name,
                "transport": server.transport,
                "target": server.url or " ".join([server.command or "", *server.args]).strip(),
                "enabled": server.enabled,
                "status": status,
                "server_version": (entry or {}).get("server_version"),
                "tools": len((entry or {}).get("tools") or []) if entry else None,
                "last_error": (entry or {}).get("error"),
            }
        )
    return out

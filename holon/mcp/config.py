"""`[mcp_servers.NAME]` in config.toml (the shape Codex uses), validated into `Server`s, and which
of them an agent uses (`.holon/mcp.json`; a private child only what its parent grants)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from holon import config, jsonfile
from holon.errors import UsageError
from holon.home.layout import Home
from holon.paths import config_path

NAME_RE = re.compile(r"[a-z0-9_-]+")
STDIO_KEYS = {"command", "args", "env", "cwd"}
HTTP_KEYS = {"url", "bearer_token_env", "headers"}
COMMON_KEYS = {"enabled", "enabled_tools", "disabled_tools", "startup_timeout_s", "tool_timeout_s"}
STARTUP_TIMEOUT_S = 10.0
TOOL_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Server:
    """One configured MCP server: stdio (`command`) or streamable HTTP (`url`)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    bearer_token_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    startup_timeout_s: float = STARTUP_TIMEOUT_S
    tool_timeout_s: float = TOOL_TIMEOUT_S

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def digest(self) -> str:
        """The digest of what decides the tool list (timeouts and tool filters aside)."""
        keep = {k: v for k, v in asdict(self).items() if k in STDIO_KEYS | HTTP_KEYS | {"name"}}
        text = json.dumps(keep, sort_keys=True, default=list)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def offers(self, tool: str) -> bool:
        """Does the tool filter let `tool` through?"""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools


def invalid(name: str, problem: str) -> UsageError:
    return UsageError(
        f"[mcp_servers.{name}] in {config_path()}: {problem}",
        kind="invalid_config",
        hint="see `man holon-mcp` for the keys; or remove it with `holon mcp remove NAME`",
    )


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name) or len(name) > 48:
        raise UsageError(
            f"invalid MCP server name {name!r}",
            kind="invalid_input",
            hint="a server name is 1 to 48 characters of a-z, 0-9, _ and -",
        )
    return name


def _strings(name: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(name, f"{key} must be an array of strings")
    return tuple(value)


def _table(name: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise invalid(name, f"{key} must be a table of strings")
    return dict(value)


def _timeout(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise invalid(name, f"{key} must be a number of seconds between 0 and 3600")
    return float(value)


def parse(name: str, table: Any) -> Server:
    """One `[mcp_servers.NAME]` table as a Server; `invalid_config` naming what is wrong."""
    if not NAME_RE.fullmatch(name):
        raise invalid(name, "the name must be [a-z0-9_-]+")
    if not isinstance(table, dict):
        raise invalid(name, "must be a table")
    unknown = sorted(set(table) - STDIO_KEYS - HTTP_KEYS - COMMON_KEYS)
    if unknown:
        raise invalid(name, f"unknown keys {', '.join(unknown)}")
    if ("command" in table) == ("url" in table):
        raise invalid(name, "set exactly one of command (stdio) or url (streamable HTTP)")
    mixed = sorted(set(table) & (HTTP_KEYS if "command" in table else STDIO_KEYS))
    if mixed:
        raise invalid(name, f"{', '.join(mixed)} do not apply to this transport")
    for key in ("command", "url", "cwd", "bearer_token_env"):
        if key in table and (not isinstance(table[key], str) or not table[key]):
            raise invalid(name, f"{key} must be a non-empty string")
    if "url" in table and not re.match(r"https?://", table["url"]):
        raise invalid(name, "url must start with http:// or https://")
    if "enabled" in table and not isinstance(table["enabled"], bool):
        raise invalid(name, "enabled must be true or false")
    return Server(
        name=name,
        command=table.get("command"),
        args=_strings(name, "args", table.get("args", [])),
        env=_table(name, "env", table.get("env", {})),
        cwd=table.get("cwd"),
        url=table.get("url"),
        bearer_token_env=table.get("bearer_token_env"),
        headers=_table(name, "headers", table.get("headers", {})),
        enabled=table.get("enabled", True),
        enabled_tools=(
            _strings(name, "enabled_tools", table["enabled_tools"])
            if "enabled_tools" in table
            else None
        ),
        disabled_tools=_strings(name, "disabled_tools", table.get("disabled_tools", [])),
        startup_timeout_s=_timeout(
            name, "startup_timeout_s", table.get("startup_timeout_s", STARTUP_TIMEOUT_S)
        ),
        tool_timeout_s=_timeout(
            name, "tool_timeout_s", table.get("tool_timeout_s", TOOL_TIMEOUT_S)
        ),
    )


def servers(*, skip_invalid: bool = False) -> list[Server]:
    """Every configured server, in name order (enabled or not); `invalid_config` for a bad table,
    or (`skip_invalid`, what a turn does: one typo must not stop the agent) without it."""
    tables = config.get("mcp_servers", {})
    if not isinstance(tables, dict):
        if skip_invalid:
            return []
        raise invalid("*", "mcp_servers must be a table of tables")
    out = []
    for name in sorted(tables):
        try:
            out.append(parse(name, tables[name]))
        except UsageError:
            if not skip_invalid:
                raise
    return out


def configured() -> bool:
    """Is any server configured? (No validation: the cheap check of every turn.)"""
    tables = config.get("mcp_servers")
    return isinstance(tables, dict) and bool(tables)


def agent_choice(home: Home) -> dict[str, list[str]]:
    """`.holon/mcp.json`: `enabled` and `disabled` server names, and `grant_children` (the
    servers this agent's private children may use). Missing: all empty."""
    try:
        data = jsonfile.object_of(home.mcp_json) or {}
    except jsonfile.Unreadable as exc:
        raise UsageError(
            f"{home.mcp_json} {exc}",
            kind="corrupt_state",
            hint='fix it: {"enabled": [...], "disabled": [...], "grant_children": [...]}',
        ) from None
    out: dict[str, list[str]] = {}
    for key in ("enabled", "disabled", "grant_children"):
        value = data.get(key, [])
        out[key] = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return out


def for_agent(home: Home) -> list[Server]:
    """The servers this agent uses: config.toml's `enabled`, overridden by its own mcp.json; a
    private child only those its parent grants in its own mcp.json."""
    if not configured():
        return []
    choice = agent_choice(home)
    parent = home.parent_root
    granted = set(agent_choice(Home(parent)).get("grant_children", [])) if parent else None
    out = []
    for server in servers(skip_invalid=True):  # `holon mcp list` and doctor name a bad one
        on = server.enabled
        if server.name in choice["enabled"]:
            on = True
        if server.name in choice["disabled"]:
            on = False
        if granted is not None:
            on = server.name in granted and server.name not in choice["disabled"]
        if on:
            out.append(server)
    return out

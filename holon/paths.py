"""Where things live: HOLON_HOME (env, else the platform user data dir) and its files."""

from __future__ import annotations

import os
from pathlib import Path


def holon_home() -> Path:
    env = os.environ.get("HOLON_HOME")
    if env:
        return Path(env).expanduser().absolute()
    import platformdirs  # only when the environment does not say

    return Path(platformdirs.user_data_dir("holon", appauthor=False))


def config_path() -> Path:
    return holon_home() / "config.toml"


def agents_dir() -> Path:
    return holon_home() / "agents"


def registry_path() -> Path:
    return holon_home() / "registry.json"


def worktrees_dir() -> Path:
    """Managed git worktrees: `worktrees/<agent_id>/<name>` (writable by that agent's commands)."""
    return holon_home() / "worktrees"


def runs_dir() -> Path:
    """Temporary agents of `holon run`: `run/holon-run-*/agent` (mode 0700), hidden with the rest
    of HOLON_HOME from every other agent's commands."""
    return holon_home() / "run"


def codex_auth_file() -> Path:
    """The Codex CLI's credentials (`$CODEX_HOME/auth.json`, default `~/.codex/auth.json`): read
    by the openai-codex transport, hidden from the agent's commands."""
    home = os.environ.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".codex") / "auth.json"

"""The registry of agents: id -> home path, and resolution of an AGENT argument (id or path)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from holon.errors import UnknownAgent, UsageError
from holon.home.layout import Home, is_home
from holon.paths import agents_dir, holon_home, registry_path
from holon.store.atomic import read_json, write_json
from holon.store.locks import locked

AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # always fullmatch: `$` allows a "\n"


def check_agent_id(agent_id: str) -> str:
    if not AGENT_ID.fullmatch(agent_id):
        raise UsageError(
            f"invalid agent id {agent_id!r}",
            kind="invalid_agent_id",
            hint=(
                "use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)"
            ),
        )
    return agent_id


def load() -> dict[str, str]:
    data = read_json(registry_path(), {}) or {}
    agents = data.get("agents", {}) if isinstance(data, dict) else {}
    return {k: v for k, v in agents.items() if isinstance(v, str)}


def register(agent_id: str, root: Path) -> None:
    home = holon_home()
    home.mkdir(parents=True, exist_ok=True)
    with locked(home / ".registry.lock"):
        agents = load()
        agents[agent_id] = os.fspath(root)
        write_json(registry_path(), {"schema_version": 1, "agents": dict(sorted(agents.items()))})


def unregister(agent_id: str) -> None:
    home = holon_home()
    if not registry_path().exists():
        return
    with locked(home / ".registry.lock"):
        agents = load()
        if agents.pop(agent_id, None) is not None:
            write_json(registry_path(), {"schema_version": 1, "agents": agents})


def all_homes() -> list[Home]:
    """Every known agent home: registry entries plus homes under $HOLON_HOME/agents."""
    seen: dict[str, Home] = {}
    for agent_id, path in load().items():
        seen[os.path.abspath(path)] = Home(path, agent_id)
    base = agents_dir()
    try:
        entries = list(os.scandir(base))
    except FileNotFoundError:
        entries = []
    for e in entries:
        key = os.path.abspath(e.path)
        if key not in seen and is_home(e.path):
            seen[key] = Home(e.path, e.name)
    return sorted(seen.values(), key=lambda h: h.agent_id)


def resolve(arg: str) -> Home:
    """An AGENT argument: a registered id, a name under $HOLON_HOME/agents, or a path to a home."""
    looks_like_path = os.sep in arg or arg.startswith(".") or arg.startswith("~")
    if not looks_like_path:
        path = load().get(arg)
        if path and is_home(path):
            return Home(path, arg)
        candidate = agents_dir() / arg
        if is_home(candidate):
            return Home(candidate, arg)
    candidate = Path(arg).expanduser()
    if is_home(candidate):
        return Home(candidate)
    raise UnknownAgent(
        f"no agent {arg!r}",
        hint="list agents with `holon agents`, or create one with "
        f"`holon init --agent-id {arg if AGENT_ID.fullmatch(arg) else 'ID'}`",
    )

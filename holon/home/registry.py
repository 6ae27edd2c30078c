"""The registry of agents: id -> home path, and resolution of an AGENT argument (id or path)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from holon.errors import UnknownAgent, UsageError
from holon.home.layout import DOT, Home, is_home
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
    path = registry_path()
    try:
        data = read_json(path, {}) or {}
    except (OSError, ValueError) as exc:  # ValueError: bad JSON or bad UTF-8
        why = exc.strerror if isinstance(exc, OSError) else "it is not valid JSON"
        raise UsageError(
            f"{path} cannot be read: {why}",
            kind="corrupt_registry",
            hint=f"fix it by hand (it maps agent ids to home paths), or move it aside: "
            f"homes under {agents_dir()} are still found without it",
        ) from None
    agents = data.get("agents", {}) if isinstance(data, dict) else {}
    if not isinstance(agents, dict):
        return {}
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


def scan() -> tuple[list[Home], list[dict[str, str | None]]]:
    """(usable homes, broken ones) for listing and `tick --all`; never raises for one bad home.

    As cheap as all_homes() plus one stat of agent.json per registered home: nothing is parsed but
    registry.json. A broken entry is {"agent_id", "home", "status", "problem", "file"}: status
    `missing` (the registered directory is gone) or `broken` (no readable agent.json there; a
    corrupt registry.json is reported with agent_id None).
    """
    seen: dict[str, Home] = {}
    broken: dict[str, dict[str, str | None]] = {}
    try:
        registered = load()
    except UsageError as exc:
        registered = {}
        path = os.fspath(registry_path())
        broken[path] = _broken(None, os.fspath(holon_home()), "broken", exc.message, path)
    for agent_id, path in registered.items():
        key = os.path.abspath(path)
        if is_home(key):
            seen[key] = Home(key, agent_id)
        else:
            broken[key] = _registered_problem(agent_id, key)
    try:
        entries = list(os.scandir(agents_dir()))
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for e in entries:
        key = os.path.abspath(e.path)
        if key in seen or key in broken:
            continue
        if is_home(key):
            seen[key] = Home(key, e.name)
        elif os.path.isdir(os.path.join(key, DOT)):  # a home whose agent.json is gone
            agent_json = os.path.join(key, DOT, "agent.json")
            broken[key] = _broken(e.name, key, "broken", "agent.json is missing", agent_json)
    homes = [seen[k] for k in sorted(seen, key=lambda k: (seen[k].agent_id, k))]
    bad = sorted(broken.values(), key=lambda b: (b["agent_id"] or "", b["home"] or ""))
    return homes, bad


def _registered_problem(agent_id: str, path: str) -> dict[str, str | None]:
    if not os.path.lexists(path):
        return _broken(agent_id, path, "missing", "the registered home no longer exists", path)
    if not os.path.isdir(path):
        return _broken(agent_id, path, "broken", "the registered home is not a directory", path)
    agent_json = os.path.join(path, DOT, "agent.json")
    return _broken(agent_id, path, "broken", "agent.json is missing", agent_json)


def _broken(
    agent_id: str | None, home: str, status: str, problem: str, file: str
) -> dict[str, str | None]:
    return {"agent_id": agent_id, "home": home, "status": status, "problem": problem, "file": file}


def forget(agent_id: str) -> str:
    """Remove `agent_id` from the registry, touching none of its files; returns the path it had.

    Refuses (kind `not_registered`) an id with no registry entry, and a home under
    $HOLON_HOME/agents/ID, which is found by its directory whatever the registry says.
    """
    path = load().get(agent_id)
    by_dir = agents_dir() / agent_id
    in_agents_dir = AGENT_ID.fullmatch(agent_id) and os.path.isdir(by_dir)
    if in_agents_dir and (path is None or os.path.abspath(path) == os.path.abspath(by_dir)):
        raise UsageError(
            f"agent {agent_id!r} lives in {by_dir}, which holon finds by its directory, not "
            "through the registry",
            kind="not_registered",
            hint=f"to forget it, move that directory out of {agents_dir()} or delete it",
        )
    if path is None:
        raise UsageError(
            f"no registry entry for {agent_id!r}",
            kind="not_registered",
            hint=f"`holon agents` lists agents; registered ids are in {registry_path()}",
        )
    unregister(agent_id)
    return path


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

"""The registry of agents: id -> home path, and resolution of an AGENT argument (id or path)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from holon import clock, jsonfile
from holon.errors import OperationFailed, UnknownAgent, UsageError
from holon.home import dueindex, regsalvage, relocate
from holon.home.layout import AGENT_ID, AGENT_JSON_HINT, DOT, Home, corrupt, is_home
from holon.paths import agents_dir, holon_home, registry_path
from holon.store.atomic import write_json
from holon.store.locks import locked
from holon.vocab import SCHEMA_VERSION


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


MAX_BYTES = 4 << 20
REPAIR_HINT = (
    "run `holon doctor --repair` to rebuild it from the homes under {agents} (the file is kept "
    "beside it as registry.json.corrupt-<time>), or fix it by hand: it maps agent ids to home paths"
)


MISMATCH_HINT = (
    "`holon agents forget {agent}` drops the stale entry and touches no file; an agent whose "
    "home moved is still reached by its path"
)


def load() -> dict[str, str]:
    """id -> absolute home path; a registry.json that cannot be used raises `corrupt_registry`.
    Entries that are not an agent id mapped to a path are left out (a listing never trips on
    them). A path inside HOLON_HOME is stored relative to it (holon.home.relocate)."""
    path = registry_path()
    try:
        data = jsonfile.object_of(path, MAX_BYTES) or {}
    except jsonfile.Unreadable as exc:
        raise corrupt_registry(str(exc)) from None
    agents = data.get("agents", {})
    if not isinstance(agents, dict):
        raise corrupt_registry("has no `agents` object")
    return relocate.derived(
        {k: v for k, v in agents.items() if AGENT_ID.fullmatch(k) and _is_path(v)}
    )


def _is_path(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) < 4096 and "\0" not in value


def corrupt_registry(problem: str) -> UsageError:
    return UsageError(
        f"{registry_path()} cannot be read: it {problem}",
        kind="corrupt_registry",
        hint=REPAIR_HINT.format(agents=agents_dir()),
    )


def load_or_none() -> tuple[dict[str, str], UsageError | None]:
    """(the registry, None), or ({}, the error) when it is corrupt: for callers that find homes by
    their directory or path as well and must go on without it."""
    try:
        return load(), None
    except UsageError as exc:
        return {}, exc


def rebuild() -> dict[str, object]:
    """Set a corrupt registry.json aside and write one from every home that can be found: the
    homes under $HOLON_HOME/agents, and those the old file's text names, the due index points to,
    or that are private children of these (holon.home.regsalvage); a readable one is rewritten
    without the entries whose home is gone. Returns what was done: {"set_aside": path or None,
    "agents": count, "outside": ids kept from outside agents/, "dropped": ids of gone homes}."""
    home = holon_home()
    with locked(home / ".registry.lock"):
        kept, error = load_or_none()
        gone = archived()
        aside = None
        if error is not None:
            stamp = clock.now_iso().replace(":", "").replace("-", "")
            aside = registry_path().with_name(f"registry.json.corrupt-{stamp}")
            os.replace(registry_path(), aside)
            kept, gone = regsalvage.found(aside)
        agents = {k: v for k, v in kept.items() if is_home(v)}
        for e in _entries(agents_dir()):
            if AGENT_ID.fullmatch(e.name) and is_home(e.path):
                agents.setdefault(Home(e.path).agent_id, os.path.abspath(e.path))
        _write(agents, {k: v for k, v in gone.items() if k not in agents})
    outside = [k for k, v in agents.items() if os.path.dirname(v) != os.fspath(agents_dir())]
    return {
        "set_aside": os.fspath(aside) if aside else None,
        "agents": str(len(agents)),
        "outside": sorted(outside),
        "dropped": sorted(set(kept) - set(agents)),
    }


def _entries(base: Path) -> list[os.DirEntry]:
    """The entries of agents/ that may be homes: never a hidden one (no agent id starts with a
    dot), so a home `holon init` is still staging, or one a killed init left
    (`.<name>.init-<pid>-*`, removed by the next init of that name), is nobody's agent."""
    try:
        return [e for e in os.scandir(base) if not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


@contextmanager
def changing(marks: tuple[Path, ...] = (), gone: str = "") -> Iterator[None]:
    """Hold the registry lock over a change to the homes (registry.json, the agents directory),
    then carry it into the host due index: `marks` are the homes that may have work, `gone`
    the agent that left (holon.home.dueindex.advance). The index is not told when the body
    raises: the next pass is a full one."""
    home = holon_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner-only when holon makes it
    with locked(home / ".registry.lock"):
        before = dueindex.signature()
        yield
        dueindex.advance(before, marks, gone)


@contextmanager
def adding(agent_id: str, root: Path) -> Iterator[None]:
    """Register `agent_id` at `root` once the body (which may put the home in place) is done,
    under the registry lock, and mark it in the due index."""
    with changing(marks=(root,)):
        yield
        agents = load()
        agents[agent_id] = os.fspath(root)
        _write(agents, archived())


def register(agent_id: str, root: Path) -> None:
    with adding(agent_id, root):
        pass


def unregister(agent_id: str) -> None:
    if not registry_path().exists():
        return
    with changing(gone=agent_id):
        agents = load()
        if agents.pop(agent_id, None) is not None:
            _write(agents, archived())


def _write(agents: dict[str, str], gone: dict[str, str]) -> None:
    data: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "agents": {k: relocate.stored(v) for k, v in sorted(agents.items())},
    }
    if gone:
        data["archived"] = {k: relocate.stored(v) for k, v in sorted(gone.items())}
    write_json(registry_path(), data)


def archived() -> dict[str, str]:
    """id -> home path of the archived private children (holon.tasks.child.childend): kept with
    their ledgers for inspection, never ticked; {} when there are none or the registry is
    unreadable."""
    try:
        data = jsonfile.object_of(registry_path(), MAX_BYTES) or {}
    except jsonfile.Unreadable:
        return {}
    found = data.get("archived")
    if not isinstance(found, dict):
        return {}
    return relocate.derived(
        {k: v for k, v in found.items() if AGENT_ID.fullmatch(k) and _is_path(v)}
    )


def drop_archived(agent_id: str) -> None:
    """Forget an archived child whose home gc removes."""
    with changing(gone=agent_id):
        gone = archived()
        if gone.pop(agent_id, None) is not None:
            _write(load(), gone)


def archive(agent_id: str, root: Path) -> None:
    """Move `agent_id` from the live agents to the archived ones (ticks and listings skip it)."""
    with changing(gone=agent_id):
        agents = load()
        agents.pop(agent_id, None)
        _write(agents, {**archived(), agent_id: os.fspath(root)})


def all_homes() -> list[Home]:
    """Every known agent home: registry entries plus homes under $HOLON_HOME/agents."""
    seen: dict[str, Home] = {}
    for agent_id, path in load_or_none()[0].items():  # a corrupt registry: agents/ still counts
        seen[os.path.abspath(path)] = Home(path, agent_id)
    for e in _entries(agents_dir()):
        key = os.path.abspath(e.path)
        if key not in seen and is_home(e.path):
            seen[key] = Home(e.path, e.name)
    return sorted(seen.values(), key=lambda h: h.agent_id)


def scan(
    known: Callable[[str, str], bool] = lambda _path, _agent_id: False,
) -> tuple[list[Home], list[dict[str, str | None]]]:
    """(usable homes, broken ones) for listing and `tick --all`; never raises for one bad home.
    `known(path, agent_id)` True: the caller vouches that `path` is still the home it found there
    (the periodic full pass: nothing in its .holon changed since), which spares a stat.

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
    base = os.fspath(holon_home())
    under = os.path.abspath(base).rstrip(os.sep) + os.sep  # homes in here need no _mismatch
    for agent_id, path in registered.items():
        key = os.path.abspath(path)
        home = known(key, agent_id) or is_home(key)
        problem = _mismatch(agent_id, key, base) if home and not key.startswith(under) else None
        if home and problem is None:
            seen[key] = Home(key, agent_id)
        elif problem is not None:
            file = os.path.join(key, DOT, "agent.json")
            broken[key] = _broken(agent_id, key, "broken", problem, file)
        else:
            broken[key] = _registered_problem(agent_id, key)
    for e in _entries(agents_dir()):
        key = os.path.abspath(e.path)
        if key in seen or key in broken:
            continue
        if known(key, e.name) or is_home(key):
            seen[key] = Home(key, e.name)
        elif os.path.isdir(os.path.join(key, DOT)):  # a home whose agent.json is gone
            agent_json = os.path.join(key, DOT, "agent.json")
            why = f"agent.json {_no_identity(agent_json)}"
            broken[key] = _broken(e.name, key, "broken", why, agent_json)
    homes = [seen[k] for k in sorted(seen, key=lambda k: (seen[k].agent_id, k))]
    bad = sorted(broken.values(), key=lambda b: (b["agent_id"] or "", b["home"] or ""))
    return homes, bad


def _mismatch(agent_id: str, path: str, base: str | None = None) -> str | None:
    """Why a registered home outside HOLON_HOME (`base`) is no longer `agent_id` (None: it is).
    A home inside is found by its place, whatever was copied or moved around it."""
    return None if relocate.inside(path, base) else relocate.identity_problem(agent_id, path)


def _registered_problem(agent_id: str, path: str) -> dict[str, str | None]:
    if not os.path.lexists(path):
        return _broken(agent_id, path, "missing", "the registered home no longer exists", path)
    if not os.path.isdir(path):
        return _broken(agent_id, path, "broken", "the registered home is not a directory", path)
    agent_json = os.path.join(path, DOT, "agent.json")
    return _broken(agent_id, path, "broken", f"agent.json {_no_identity(agent_json)}", agent_json)


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
    error = None
    if "\0" in arg or len(arg) > 4096:  # neither an id nor a path
        raise UnknownAgent(f"no agent {_shown(arg)}", hint="name an agent id or the path of a home")
    if not looks_like_path:
        registered, error = load_or_none()  # a corrupt registry still lets paths and agents/ work
        path = registered.get(arg)
        if path and is_home(path):
            problem = _mismatch(arg, path)
            if problem is not None:
                raise OperationFailed(
                    f"the registered home of {arg!r}, {path}, no longer matches: {problem}",
                    kind="home_mismatch",
                    hint=MISMATCH_HINT.format(agent=arg),
                )
            return Home(path, arg)
        candidate = agents_dir() / arg
        if is_home(candidate):
            return Home(candidate, arg)
        path = archived().get(arg)
        if path and is_home(path):
            return Home(path, arg)
    try:
        candidate = Path(arg).expanduser()
    except RuntimeError:  # "~name" of no user: a literal relative path
        candidate = Path(arg)
    if is_home(candidate):
        return Home(candidate)
    if error is not None:  # the id may be in the registry that cannot be read
        raise error
    for where in (agents_dir() / arg, candidate):
        if "\0" not in arg and os.path.isdir(os.path.join(where, DOT)):  # a home without identity
            agent_json = Path(where, DOT, "agent.json")
            raise corrupt(agent_json, _no_identity(agent_json), AGENT_JSON_HINT)
    raise UnknownAgent(
        f"no agent {_shown(arg)}",
        hint="list agents with `holon agents`, or create one with "
        f"`holon init --agent-id {arg if AGENT_ID.fullmatch(arg) else 'ID'}`",
    )


def _no_identity(agent_json: str | os.PathLike) -> str:
    if os.path.lexists(agent_json):
        return "is not a regular file"
    return "is missing"


def _shown(arg: str) -> str:
    """`arg` quoted for a message, at most ~200 characters of it."""
    return repr(arg) if len(arg) <= 200 else repr(arg[:200]) + f" (+{len(arg) - 200} characters)"

"""Home migrations: ordered `mNNN_…` steps whose names `.holon/agent.json` records once applied.

`holon init` records every step (a new home is current). An older home is upgraded by the
first command that opens it through an Agent. Each step is idempotent and takes no lock: two
commands that upgrade the same home at once write the same files.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from holon.home import settings
from holon.home.layout import AGENT_JSON_HINT, HOME_FORMAT, Home, merged_gitignore, read_record
from holon.store.atomic import read_json, write_json, write_text


def m001_initial_layout(home: Home) -> None:
    """The layout of home format 1 (made by `holon init`; nothing to do)."""


def m002_git_friendly_home(home: Home) -> None:
    """Home format 2: runtime files are ignored by git, and the operator's choices move from the
    run state into the tracked `settings.json`."""
    write_gitignore(home)
    if not home.settings_json.exists():
        try:
            state = read_json(home.state_json) or {}
        except ValueError:  # a corrupt run state has nothing to keep; the Agent sets it aside
            state = {}
        settings.write(home, settings.project(state if isinstance(state, dict) else {}))


MIGRATIONS: list[Callable[[Home], None]] = [m001_initial_layout, m002_git_friendly_home]
NAMES = [m.__name__ for m in MIGRATIONS]
# home root -> the agent.json (ino, size, mtime) this process found current
_current: dict[str, tuple[int, int, int]] = {}


def write_gitignore(home: Home) -> bool:
    """Make holon's block of `.holon/.gitignore` current, keeping every other line. True when the
    file was written."""
    try:
        existing: str | None = home.gitignore.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    except UnicodeDecodeError:
        existing = home.gitignore.read_bytes().decode("utf-8", "replace")
    text = merged_gitignore(existing)
    if text == existing:
        return False
    write_text(home.gitignore, text)
    return True


def pending(home: Home) -> list[str]:
    ident = read_record(home.agent_json, AGENT_JSON_HINT) or {}
    applied = ident.get("migrations") if isinstance(ident, dict) else None
    done = set(applied) if isinstance(applied, list) else set()
    return [name for name in NAMES if name not in done]


def apply_pending(home: Home) -> list[str]:
    """Run the steps `home` has not recorded, in order, then record them. Returns their names."""
    todo = pending(home)
    if not todo:
        return []
    for step in MIGRATIONS:
        if step.__name__ in todo:
            step(home)
    ident = read_record(home.agent_json, AGENT_JSON_HINT) or {}
    done = ident.get("migrations") if isinstance(ident.get("migrations"), list) else []
    ident["migrations"] = done + [n for n in todo if n not in done]
    ident["home_format"] = max(int(ident.get("home_format") or 1), HOME_FORMAT)
    write_json(home.agent_json, ident)
    return todo


def ensure_current(home: Home) -> list[str]:
    """apply_pending, unless this process already found this agent.json current (an Agent is
    made many times per command: then it costs one stat). A home that cannot be written is left
    as it is; a corrupt agent.json raises `corrupt_state`."""
    try:
        st = os.stat(home.agent_json)
    except FileNotFoundError:
        return []
    root, seen = os.fspath(home.root), (st.st_ino, st.st_size, st.st_mtime_ns)
    if _current.get(root) == seen:
        return []
    try:
        applied = apply_pending(home)
    except OSError:  # a home that cannot be written stays as it is; the next command retries
        return []
    st = os.stat(home.agent_json)
    _current[root] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return applied

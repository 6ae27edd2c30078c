"""Home migrations: ordered `mNNN_…` steps whose names `.holon/agent.json` records once applied.

`holon init` records every step (a new home is current). An older home is upgraded by the
first command that opens it through an Agent. Each step is idempotent and takes no lock: two
commands that upgrade the same home at once write the same files.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from holon import jsonfile
from holon.home import settings
from holon.home.layout import (
    HOME_FORMAT,
    Home,
    merged_gitattributes,
    merged_gitignore,
    read_identity,
)
from holon.store.atomic import write_json, write_text
from holon.vocab import SCHEMA_VERSION


def m001_initial_layout(home: Home) -> None:
    """The layout of home format 1 (made by `holon init`; nothing to do)."""


def m002_git_friendly_home(home: Home) -> None:
    """Home format 2: runtime files are ignored by git, and the operator's choices move from the
    run state into the tracked `settings.json`."""
    write_gitignore(home)
    if not home.settings_json.exists():
        try:
            state = jsonfile.load(home.state_json) or {}
        except jsonfile.Unreadable:  # a corrupt run state has nothing to keep; the Agent sets it
            state = {}  # aside
        settings.write(home, settings.project(state if isinstance(state, dict) else {}))


def m003_sealed_admission(home: Home) -> None:
    """Admission seals (holon.agent.seal): the tick runs only queued messages admission sealed.
    Messages an older holon queued carry no seal, though that holon admitted them: their ids are
    recorded in `admission.legacy.json` so they still run, and no file queued later does. The
    .gitignore block gains the files of this format (the key, the list, ApplyPatch journals)."""
    write_gitignore(home)
    found = set(legacy_ids(home))
    for d in (home.queue.new, home.queue.cur):
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
        except OSError:
            continue
        for name in names:
            try:
                record = jsonfile.object_of(d / name, 1 << 24)
            except jsonfile.Unreadable:
                continue  # the tick sets it aside as unreadable
            if record and not record.get("seal") and isinstance(record.get("id"), str):
                found.add(record["id"])
    if found and found != set(legacy_ids(home)):
        write_json(home.admission_legacy, {"schema_version": SCHEMA_VERSION, "ids": sorted(found)})


def m004_merge_safe_ledgers(home: Home) -> None:
    """`.holon/.gitattributes` gains holon's block: git union-merges the JSONL ledgers, so two
    clones of a home merge without conflict markers (holon.agent.ledgermerge)."""
    write_gitattributes(home)


def legacy_ids(home: Home) -> list[str]:
    """The ids m003 recorded ([] when none, or when the file cannot be read)."""
    try:
        doc = jsonfile.object_of(home.admission_legacy, 1 << 24) or {}
    except jsonfile.Unreadable:
        return []
    ids = doc.get("ids")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


MIGRATIONS: list[Callable[[Home], None]] = [
    m001_initial_layout,
    m002_git_friendly_home,
    m003_sealed_admission,
    m004_merge_safe_ledgers,
]
NAMES = [m.__name__ for m in MIGRATIONS]
# home root -> the agent.json (ino, size, mtime) this process found current
_current: dict[str, tuple[int, int, int]] = {}


def write_gitignore(home: Home) -> bool:
    """Make holon's block of `.holon/.gitignore` current, keeping every other line. True when the
    file was written."""
    return _write_block(home.gitignore, merged_gitignore)


def write_gitattributes(home: Home) -> bool:
    """Make holon's block of `.holon/.gitattributes` current, keeping every other line."""
    return _write_block(home.gitattributes, merged_gitattributes)


def _write_block(path: os.PathLike, merged: Callable[[str | None], str]) -> bool:
    try:
        data = jsonfile.read_bytes(path, 1 << 20)
    except jsonfile.Unreadable:  # a directory, a FIFO, a huge file: not ours to replace
        return False
    existing = None if data is None else data.decode("utf-8", "replace")
    text = merged(existing)
    if text == existing:
        return False
    write_text(path, text)
    return True


def pending(home: Home) -> list[str]:
    done = set(read_identity(home.agent_json).get("migrations") or ())
    return [name for name in NAMES if name not in done]


def apply_pending(home: Home) -> list[str]:
    """Run the steps `home` has not recorded, in order, then record them. Returns their names."""
    todo = pending(home)
    if not todo:
        return []
    for step in MIGRATIONS:
        if step.__name__ in todo:
            step(home)
    ident = read_identity(home.agent_json)
    done = ident.get("migrations") or []
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

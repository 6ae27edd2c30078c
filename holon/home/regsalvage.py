"""What a registry.json that cannot be parsed still tells `holon doctor --repair`: the homes its
text names, the homes the due index points to, and the private children of each; every one is
kept only when its own agent.json says which agent it is."""

from __future__ import annotations

import json
import os
import re

from holon import jsonfile
from holon.home import dueindex, relocate
from holon.home.layout import AGENT_ID, DOT, is_home

ENTRY = re.compile(r'"([A-Za-z0-9][A-Za-z0-9._-]{0,63})"\s*:\s*("(?:[^"\\\n]|\\.){1,4096}")')
MAX_BYTES = 4 << 20


def found(corrupt_file: str | os.PathLike) -> tuple[dict[str, str], dict[str, str]]:
    """(live, archived): agent id -> absolute home path of every home found."""
    candidates: list[tuple[str | None, str]] = []
    for agent_id, path in _named(corrupt_file):
        candidates += [(agent_id, p) for p in relocate.derived({agent_id: path}).values()]
    for name in dueindex.listing() or []:
        where = dueindex.target(name)
        if where:
            candidates.append((None, where))
    live: dict[str, str] = {}
    gone: dict[str, str] = {}
    while candidates:
        claimed, path = candidates.pop(0)
        path = os.path.abspath(path)
        ident = _identity(path)
        if ident is None or (claimed is not None and ident[0] != claimed):
            continue
        agent_id, archived = ident
        into = gone if archived else live
        if agent_id in live or agent_id in gone:
            continue
        into[agent_id] = path
        candidates += [(None, e.path) for e in _children(path)]
    return live, gone


def _named(corrupt_file: str | os.PathLike) -> list[tuple[str, str]]:
    try:
        with open(corrupt_file, "rb") as fh:
            text = fh.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    out = []
    for m in ENTRY.finditer(text):
        try:
            path = json.loads(m.group(2))
        except ValueError:
            continue
        if isinstance(path, str) and "\0" not in path:
            out.append((m.group(1), path))
    return out


def _identity(path: str) -> tuple[str, bool] | None:
    """(agent id, archived) from the home's agent.json; None when it is not a readable home."""
    if not is_home(path):
        return None
    try:
        data = jsonfile.object_of(os.path.join(path, DOT, "agent.json"), 1 << 20) or {}
    except jsonfile.Unreadable:
        return None
    agent_id = data.get("agent_id")
    if not isinstance(agent_id, str) or not AGENT_ID.fullmatch(agent_id):
        return None
    return agent_id, bool(data.get("archived_at"))


def _children(path: str) -> list[os.DirEntry]:
    try:
        return [e for e in os.scandir(os.path.join(path, DOT, "children")) if e.is_dir()]
    except OSError:
        return []

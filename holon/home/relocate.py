"""Paths that stay true when HOLON_HOME is copied or moved: a path inside HOLON_HOME is stored
relative to it, and an absolute one an older holon wrote is re-derived on every read.

Stdlib only: the idle path of `tick --all` reads the registry through it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from holon.home.layout import DOT, is_home
from holon.paths import holon_home


def stored(path: str | os.PathLike, base: str | os.PathLike | None = None) -> str:
    """How a file of HOLON_HOME spells `path`: relative to `base` (HOLON_HOME) when inside it,
    absolute otherwise."""
    where = os.path.abspath(path)
    rel = os.path.relpath(where, os.fspath(base or holon_home()))
    return where if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def inside(path: str | os.PathLike, base: str | os.PathLike | None = None) -> bool:
    """Is `path` HOLON_HOME (or `base`) or beneath it? (as `stored` would say, without relpath:
    a full pass asks it of every registered home)"""
    where, root = os.path.abspath(path), os.path.abspath(base or holon_home())
    return where == root or where.startswith(root.rstrip(os.sep) + os.sep)


def derived(entries: dict[str, str]) -> dict[str, str]:
    """id -> absolute home path of registry entries as stored. A relative entry is under
    HOLON_HOME. An absolute one under where an older holon's HOLON_HOME was (X of an entry
    `X/agents/ID` for its own ID, X not HOLON_HOME) is the same place in this HOLON_HOME when
    a home is there: a copied HOLON_HOME never reaches back into its original."""
    base = os.fspath(holon_home())
    old = _old_bases(entries, base)
    out = {}
    for agent_id, value in entries.items():
        if not os.path.isabs(value):
            out[agent_id] = os.path.normpath(os.path.join(base, value))
        else:
            out[agent_id] = _moved(os.path.normpath(value), old, base)
    return out


def _old_bases(entries: dict[str, str], base: str) -> set[str]:
    found = set()
    for agent_id, value in entries.items():
        if not os.path.isabs(value):
            continue
        parent = os.path.dirname(os.path.normpath(value))
        if os.path.basename(os.path.normpath(value)) == agent_id:
            if os.path.basename(parent) == "agents" and os.path.dirname(parent) != base:
                found.add(os.path.dirname(parent))
    return found


def _moved(path: str, old: set[str], base: str) -> str:
    for x in sorted(old, key=len, reverse=True):
        if path.startswith(x.rstrip(os.sep) + os.sep):
            here = os.path.join(base, os.path.relpath(path, x))
            if is_home(here):
                return here
    return path


def tree_base(path: str) -> str | None:
    """X of a managed worktree's path `X/worktrees/ID/NAME` (the HOLON_HOME it was made in),
    None for a path of another shape."""
    tree = os.path.normpath(path)
    agent_dir = os.path.dirname(tree)
    if os.path.basename(os.path.dirname(agent_dir)) != "worktrees" or tree == agent_dir:
        return None
    return os.path.dirname(os.path.dirname(agent_dir))


def old_bases(trees: list[Any], homes: list[Any], base: str | None = None) -> set[str]:
    """The other HOLON_HOMEs absolute paths of a record were written under: X of a managed
    worktree's path `X/worktrees/ID/NAME` in `trees`, and X of an agent home `X/agents/ID` in
    `homes` when that home is in this HOLON_HOME too (a directory named agents elsewhere is not
    taken for one)."""
    base = base or os.fspath(holon_home())
    found = {x for t in trees if isinstance(t, str) and (x := tree_base(t))}
    for h in homes:
        if not (isinstance(h, str) and os.path.isabs(h)):
            continue
        agents_dir, name = os.path.split(os.path.normpath(h))
        if os.path.basename(agents_dir) == "agents" and is_home(os.path.join(base, "agents", name)):
            found.add(os.path.dirname(agents_dir))
    return found - {base}


BINDING_PATHS = ("workspace_anchor", "execution_root", "cwd")
PARENT_HOME = "parent_home"  # the workspace id of a private child bound to its parent's home


def binding_mapped(binding: Any, fn: Callable[[str], str]) -> None:
    """`fn` applied in place to the paths of a workspace binding (holon.agent.workspaces' active
    entry; a child task's `workspace`) and of its managed worktree."""
    if not isinstance(binding, dict):
        return
    for key in BINDING_PATHS:
        if isinstance(binding.get(key), str) and binding[key]:
            binding[key] = fn(binding[key])
    tree_mapped(binding.get("worktree"), fn)


def tree_mapped(tree: Any, fn: Callable[[str], str]) -> None:
    """`fn` applied in place to a worktree info's `path` (holon.agent.worktree)."""
    if isinstance(tree, dict) and isinstance(tree.get("path"), str) and tree["path"]:
        tree["path"] = fn(tree["path"])


def child_task(record: dict[str, Any], *, to_store: bool) -> dict[str, Any]:
    """A child task record (holon.tasks) with the paths of its `workspace` binding and of its
    `worktree` (path, repo_anchor) stored relative to HOLON_HOME (`to_store`), else placed in
    this HOLON_HOME as read."""
    if not isinstance(record.get("workspace"), dict) and not isinstance(
        record.get("worktree"), dict
    ):
        return record
    out = json.loads(json.dumps(record))
    ws = out["workspace"] if isinstance(out.get("workspace"), dict) else {}
    tree = out["worktree"] if isinstance(out.get("worktree"), dict) else {}
    fn: Callable[[str], str] = stored
    if not to_store:
        inner = ws["worktree"] if isinstance(ws.get("worktree"), dict) else {}
        homes = [ws.get("workspace_anchor")] if ws.get("workspace_id") == PARENT_HOME else []
        base = os.fspath(holon_home())
        old = old_bases([tree.get("path"), inner.get("path")], homes, base)
        fn = lambda v: placed(v, old, base)  # noqa: E731
    binding_mapped(ws, fn)
    tree_mapped(tree, fn)
    if isinstance(tree.get("repo_anchor"), str) and tree["repo_anchor"]:
        tree["repo_anchor"] = fn(tree["repo_anchor"])  # the parent's home when it is the repository
    return out


def placed(value: str, old: set[str], base: str | None = None) -> str:
    """A path as stored, made absolute: relative to HOLON_HOME when relative; an absolute one
    under an old HOLON_HOME in `old` is the same place in this HOLON_HOME (there or not): a copy
    never works in its original's directories."""
    base = base or os.fspath(holon_home())
    if not os.path.isabs(value):
        return os.path.normpath(os.path.join(base, value))
    path = os.path.normpath(value)
    for x in sorted(old - {base}, key=len, reverse=True):
        if path.startswith(x.rstrip(os.sep) + os.sep):
            return os.path.join(base, os.path.relpath(path, x))
    return path


def identity_problem(agent_id: str, path: str) -> str | None:
    """Why the home at `path` (outside HOLON_HOME) is not agent `agent_id`, None when it is:
    a registered home replaced by another agent's, or one whose agent.json is unreadable."""
    from holon import jsonfile

    try:
        data = jsonfile.object_of(os.path.join(path, DOT, "agent.json"), 1 << 20) or {}
    except jsonfile.Unreadable as exc:
        return f"agent.json {exc}"
    found = data.get("agent_id")
    if found != agent_id:
        return (
            f"the home there is agent {found!r}, not {agent_id!r} (moved, or replaced by "
            "another agent's home)"
        )
    return None

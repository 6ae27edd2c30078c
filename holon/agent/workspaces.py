"""The execution binding: the workspace an agent works in, and where its file and shell tools run.

`.holon/workspace.json` (written atomically under the agent's state lock):

    {"schema_version": 1,
     "active": {"workspace_id", "workspace_anchor", "execution_root", "cwd",
                "mode": "direct" | "isolated",
                "projection_kind": "canonical_root" | "git_worktree_root",
                "worktree": {path, branch, base_commit, original_branch, state} | null},
     "attached": {"<workspace_id>": {"anchor", "attached_at", "worktree": {...} | null}},
     "retained": [{"workspace_id", "path", "branch", "reason", "changed_files", "retained_at"}]}

`agent_home` is never in `attached`: it is always there and cannot be detached; without an
`active` entry the agent home is active. The anchor is the stable project identity (the main
worktree of a git repository, else the directory itself); the execution root is where tools run
(the anchor, a linked worktree of it, or the managed worktree of isolated mode); `cwd` stays
inside the execution root. A file of the previous shape (`{"execution_root": ...}` only) is still
read. AgentState.active_workspace_id, attached_workspaces and cwd follow every write (status and
memory search read them); this file is the binding's source of truth. A path inside $HOLON_HOME
(a managed worktree, the agent home) is stored relative to it and made absolute on read (`stored`,
`placed`; holon.home.relocate), so the binding of a copied HOLON_HOME is the copy's.

Isolated mode creates `$HOLON_HOME/worktrees/<agent_id>/<name>` on branch
`holon/<agent_id>/<label>` (holon.agent.worktree); `<name>.occupant.json` beside it names the one
agent that may bind it. The worktree is recorded (`state: creating`) before `git worktree add`
and marked `ready` after; a `creating` entry found later (a crash between) is rolled back.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holon import clock, jsonfile, paths
from holon.agent import worktree
from holon.agent.handle import Agent
from holon.errors import HolonError, UsageError
from holon.home import relocate
from holon.home.layout import DOT, Home, corrupt
from holon.store import crashpoint
from holon.store.atomic import make_private_dir, write_json
from holon.vocab import SCHEMA_VERSION

HOME_ID = "agent_home"
PARENT_HOME = relocate.PARENT_HOME  # a private child bound to its parent's home
HOMES = (HOME_ID, PARENT_HOME)  # the workspaces that are an agent home
MODES = ("direct", "isolated")
KINDS = ("canonical_root", "git_worktree_root")
HINT = f"restore {DOT}/workspace.json from git or delete it (the agent home is used)"


class WorkspaceError(UsageError):
    kind = "invalid_workspace"


def _path_ok(v: Any) -> bool:
    return isinstance(v, str) and bool(v) and "\0" not in v


def _tree_ok(v: Any) -> bool:
    keys = ("path", "branch", "base_commit")
    return v is None or (isinstance(v, dict) and all(_path_ok(v.get(k)) for k in keys))


def _active_problem(a: Any) -> str | None:
    if not isinstance(a, dict):
        return "has an active entry that is not an object"
    for key in ("workspace_id", "workspace_anchor", "execution_root", "cwd"):
        if not _path_ok(a.get(key)):
            return f"has an invalid active.{key}"
    if a.get("mode") not in MODES or a.get("projection_kind") not in KINDS:
        return "has an invalid active.mode or active.projection_kind"
    return None if _tree_ok(a.get("worktree")) else "has an invalid active.worktree"


def problem(doc: dict[str, Any]) -> str | None:
    """What is wrong with a workspace.json object, or None."""
    root = doc.get("execution_root")
    if root is not None and not _path_ok(root):
        return "has an invalid execution_root (a path)"
    if "active" in doc and (p := _active_problem(doc["active"])):
        return p
    attached = doc.get("attached", {})
    if not isinstance(attached, dict):
        return "has an attached entry that is not an object"
    for wid, entry in attached.items():
        if not (isinstance(entry, dict) and _path_ok(entry.get("anchor"))):
            return f"has an invalid attached workspace {wid[:80]!r}"
        if not _tree_ok(entry.get("worktree")):
            return f"has an invalid worktree for {wid[:80]!r}"
    if not isinstance(doc.get("retained", []), list):
        return "has a retained entry that is not a list"
    return None


def _mapped(doc: dict[str, Any], fn: Callable[[str], str]) -> dict[str, Any]:
    """A copy of a (checked) workspace.json object with `fn` applied to every path in it."""
    out = json.loads(json.dumps(doc))  # no shared dicts (a deep copy keeps them): fn once each
    if _path_ok(out.get("execution_root")):
        out["execution_root"] = fn(out["execution_root"])
    relocate.binding_mapped(out.get("active"), fn)
    for entry in out.get("attached", {}).values():
        entry["anchor"] = fn(entry["anchor"])
        relocate.tree_mapped(entry.get("worktree"), fn)
    for kept in out.get("retained", []):
        relocate.tree_mapped(kept, fn)
    return out


def stored(doc: dict[str, Any]) -> dict[str, Any]:
    """workspace.json as written: paths inside HOLON_HOME (managed worktrees, agent homes)
    relative to it (holon.home.relocate), project paths absolute."""
    return _mapped(doc, relocate.stored)


def placed(doc: dict[str, Any]) -> dict[str, Any]:
    """workspace.json as read: every path absolute in this HOLON_HOME. An absolute path an older
    holon wrote under the HOLON_HOME of its day (relocate.old_bases: of a managed worktree, or of
    the agent home bound as agent_home or parent_home) is the same place here: an agent of a
    copied HOLON_HOME works in the copy's worktree, never in the original's."""
    active = doc.get("active") or {}
    trees = [active.get("worktree")] + [e.get("worktree") for e in doc.get("attached", {}).values()]
    trees += doc.get("retained", [])
    homes = [active.get("workspace_anchor")] if active.get("workspace_id") in HOMES else []
    base = os.fspath(paths.holon_home())
    old = relocate.old_bases([t.get("path") for t in trees if isinstance(t, dict)], homes, base)
    return _mapped(doc, lambda v: relocate.placed(v, old, base))


def read(home: Home) -> dict[str, Any]:
    """workspace.json ({} when missing), its paths absolute (`placed`); `corrupt_state` when it
    is not a binding."""
    path = home.workspace_json
    try:
        found = jsonfile.object_of(path, 1 << 20) or {}
    except jsonfile.Unreadable as exc:
        raise corrupt(path, str(exc), HINT) from None
    why = problem(found)
    if why:
        raise corrupt(path, why, HINT)
    return placed(found)


def home_binding(home: Home, cwd: str | None = None) -> dict[str, Any]:
    root = os.fspath(home.root)
    if cwd and not _inside(Path(os.path.abspath(cwd)), home.root):
        cwd = None  # the run state of a home copied or moved from elsewhere: never reach back
    return {
        "workspace_id": HOME_ID,
        "workspace_anchor": root,
        "execution_root": root,
        "cwd": cwd or root,
        "mode": "direct",
        "projection_kind": "canonical_root",
        "worktree": None,
    }


def binding(agent: Agent) -> dict[str, Any]:
    """The active binding (the agent home when none is recorded)."""
    doc = read(agent.home)
    active = doc.get("active")
    if active and active["workspace_id"] == HOME_ID:  # this home, wherever it is now
        return home_binding(agent.home, active["cwd"])
    if active:
        return dict(active)
    state = agent.state()
    return binding_of(agent.home, state.active_workspace_id, state.cwd, doc)


def binding_of(
    home: Home, workspace: str | None, cwd: str | None, doc: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The active binding of a home whose run state names `workspace` and `cwd` (for readers
    of the stored state as a plain dict: holon.tasks.agentsummary)."""
    doc = read(home) if doc is None else doc
    if doc.get("active"):
        return dict(doc["active"])
    legacy = doc.get("execution_root")
    if workspace and workspace != HOME_ID and legacy:  # the previous shape of this file
        return {
            **home_binding(home),
            "workspace_id": workspace,
            "workspace_anchor": legacy,
            "execution_root": legacy,
            "cwd": cwd or legacy,
        }
    return home_binding(home, cwd)


def workspace_id(anchor: Path) -> str:
    """`ws_<name>_<8 hex of sha256(anchor)>`: stable for one anchor path."""
    name = re.sub(r"[^a-z0-9]+", "-", anchor.name.lower()).strip("-")[:24] or "root"
    return f"ws_{name}_{hashlib.sha256(os.fspath(anchor).encode()).hexdigest()[:8]}"


# -- writing -------------------------------------------------------------------------------------


def _write(agent: Agent, doc: dict[str, Any]) -> None:
    """workspace.json, then the state's projection of it; both under the state lock."""
    doc["schema_version"] = SCHEMA_VERSION
    active = doc.get("active") or home_binding(agent.home)

    def project(s: Any) -> None:
        s.active_workspace_id = active["workspace_id"]
        s.attached_workspaces = sorted(doc.get("attached", {}))
        s.cwd = active["cwd"]

    with agent.state_lock():
        crashpoint.step("workspace.write")
        write_json(agent.home.workspace_json, stored(doc))
        agent.update_state(project)


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _occupant_file(tree: Path) -> Path:
    return tree.parent / f"{tree.name}.occupant.json"


def _managed_tree(path: Path) -> Path | None:
    """The managed worktree (`worktrees/<agent>/<name>`) holding `path`, or None."""
    base = _real(paths.worktrees_dir())
    if not _inside(path, base) or path == base:
        return None
    parts = path.relative_to(base).parts
    return base / parts[0] / parts[1] if len(parts) >= 2 else None


def check_occupancy(agent: Agent, path: Path) -> None:
    """Refuse `path` when it lies in a managed worktree another agent occupies."""
    tree = _managed_tree(_real(path))
    if tree is None:
        return
    try:
        owner = (jsonfile.object_of(_occupant_file(tree), 1 << 16) or {}).get("agent_id")
    except jsonfile.Unreadable:
        owner = None
    owner = owner or tree.parent.name
    if owner != agent.id:
        raise WorkspaceError(
            f"{tree} is the isolated worktree of agent {owner}",
            kind="workspace_occupied",
            hint="bind the repository itself, or use mode isolated for a worktree of your own",
        )


def _cwd(root: Path, cwd: str | None, default: Path) -> Path:
    if cwd is None:
        target = default if default.is_dir() else root
    else:
        target = Path(cwd) if os.path.isabs(cwd) else root / cwd
    real = _real(target)
    if not _inside(real, _real(root)) or not real.is_dir():
        raise WorkspaceError(
            f"cwd {cwd or target} is not a directory inside the execution root {root}",
            kind="invalid_cwd",
            hint=f"give a directory inside {root} (relative paths resolve from it)",
        )
    return real


def recover(agent: Agent, doc: dict[str, Any]) -> list[str]:
    """Roll back the worktrees a crash left `creating`; the workspace ids rolled back."""
    done = []
    for wid, entry in doc.get("attached", {}).items():
        tree = entry.get("worktree")
        if not tree or tree.get("state") != "creating":
            continue
        anchor = Path(entry["anchor"])
        if worktree.toplevel(anchor) is not None:
            worktree.roll_back(anchor, tree)
        _occupant_file(Path(tree["path"])).unlink(missing_ok=True)
        entry["worktree"] = None
        done.append(wid)
    if done:
        _write(agent, doc)
        agent.event("worktree_rolled_back", workspace_ids=done)
    return done


def refuse_reserved(agent: Agent, p: Path) -> None:
    """A workspace is never holon's own state: not $HOLON_HOME or a directory holding it, not
    another agent's home or one holding it, not this agent's `.holon/`. The agent's own home is
    fine, and so is a managed worktree, for the agent that occupies it. An execution root is
    writable by the agent's commands: binding one of these would hand them the runtime's state."""
    home = _real(agent.home.root)
    managed = _real(paths.worktrees_dir())
    if _inside(p, managed) and len(p.relative_to(managed).parts) >= 2:
        return  # in a managed worktree: its occupant decides (check_occupancy)
    if _inside(p, home) and not _inside(p, home / DOT):
        return
    from holon.home import registry

    reserved = [_real(paths.holon_home()), home, home / DOT]
    try:
        reserved += [_real(r) for r in registry.load().values()]
    except HolonError:
        pass  # a broken registry: the homes under $HOLON_HOME are still covered
    for r in reserved:
        if _inside(p, r) or _inside(r, p):
            raise WorkspaceError(
                f"{p} holds holon's own state ({r}); it cannot be a workspace",
                kind="reserved_workspace_path",
                hint="bind a project directory outside $HOLON_HOME and the agent homes",
            )


def _resolve_path(agent: Agent, doc: dict[str, Any], path: str, base: Path) -> tuple[str, Path]:
    """(workspace id, the directory to work in) for a path; attaches its workspace."""
    p = _real(Path(base) / path)
    if not p.is_dir():
        raise WorkspaceError(
            f"{path} is not a directory", kind="invalid_workspace_path", hint="give a directory"
        )
    refuse_reserved(agent, p)
    anchor = worktree.main_worktree(p) or p
    if anchor == _real(agent.home.root):
        return HOME_ID, p
    check_occupancy(agent, p)
    wid = workspace_id(anchor)
    attached = doc.setdefault("attached", {})
    if wid not in attached:
        attached[wid] = {"anchor": os.fspath(anchor), "attached_at": clock.now_iso()}
    return wid, p


def _entry(doc: dict[str, Any], wid: str) -> dict[str, Any]:
    entry = doc.get("attached", {}).get(wid)
    if entry is None:
        known = ", ".join([HOME_ID, *sorted(doc.get("attached", {}))])
        raise WorkspaceError(
            f"no attached workspace {wid[:80]!r}",
            kind="unknown_workspace",
            hint=f"attached: {known}; attach another with a path",
        )
    return entry


def use(
    agent: Agent,
    *,
    path: str | None = None,
    workspace: str | None = None,
    mode: str = "direct",
    cwd: str | None = None,
    label: str | None = None,
    base: Path | None = None,
) -> dict[str, Any]:
    """Make a workspace active (exactly one of `path`, `workspace`); the new binding."""
    if (path is None) == (workspace is None):
        raise WorkspaceError(
            "give exactly one of a path or a workspace id",
            kind="invalid_input",
            hint="a path attaches a directory; a workspace id (or agent_home) activates one",
        )
    if mode not in MODES:
        raise WorkspaceError(
            f"mode {mode!r} is not a workspace mode",
            kind="invalid_input",
            hint="use direct or isolated",
        )
    doc = read(agent.home)
    recover(agent, doc)
    there = None
    if path is not None:
        wid, there = _resolve_path(agent, doc, path, base or agent.home.root)
    else:
        wid = workspace or HOME_ID
    if wid == HOME_ID:
        if mode == "isolated":
            raise WorkspaceError(
                "the agent home has no isolated mode",
                kind="invalid_input",
                hint="use mode isolated with a git repository outside the home",
            )
        root = agent.home.root
        doc["active"] = home_binding(agent.home, os.fspath(_cwd(root, cwd, there or root)))
        _write(agent, doc)
        return doc["active"]
    entry = _entry(doc, wid)
    anchor = Path(entry["anchor"])
    if not anchor.is_dir():
        raise WorkspaceError(
            f"workspace {wid} is gone: {anchor} is not a directory",
            kind="workspace_missing",
            hint=f"detach it (DetachWorkspace {wid}) or attach its new path",
        )
    top = (worktree.toplevel(there) if there else None) or anchor
    sub = there.relative_to(_real(top)) if there and _inside(there, _real(top)) else Path()
    tree = None
    if mode == "isolated":
        tree = _isolated(agent, doc, wid, label)
        root = Path(tree["path"])
    else:
        root = _real(top)
    active = {
        "workspace_id": wid,
        "workspace_anchor": os.fspath(anchor),
        "execution_root": os.fspath(root),
        "cwd": os.fspath(_cwd(root, cwd, root / sub)),
        "mode": mode,
        "projection_kind": "canonical_root" if root == _real(anchor) else "git_worktree_root",
        "worktree": tree,
    }
    doc["active"] = active
    _write(agent, doc)
    return active


def _isolated(agent: Agent, doc: dict[str, Any], wid: str, label: str | None) -> dict[str, Any]:
    """The agent's managed worktree of workspace `wid`: the one it has, else a new one."""
    entry = doc["attached"][wid]
    anchor = Path(entry["anchor"])
    tree = entry.get("worktree")
    if tree and Path(tree["path"]).is_dir():
        return tree
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", label or wid).strip("-.")[:48] or wid
    home = paths.worktrees_dir() / agent.id
    dest, n = home / name, 1
    while dest.exists() or _occupant_file(dest).exists():
        n += 1
        dest = home / f"{name}-{n}"
    for d in (paths.worktrees_dir(), home):
        make_private_dir(d)
    tree = {**worktree.plan(anchor, dest, f"holon/{agent.id}/{name}"), "state": "creating"}
    entry["worktree"] = tree
    _write(agent, doc)  # recorded before git makes anything: a crash is rolled back later
    crashpoint.step("workspace.worktree.add")
    worktree.add(anchor, tree)
    occupant = {"agent_id": agent.id, "workspace_id": wid, "since": clock.now_iso()}
    write_json(_occupant_file(dest), occupant)
    crashpoint.step("workspace.worktree.ready")
    tree["state"] = "ready"
    return tree


def detach(agent: Agent, wid: str) -> dict[str, Any]:
    """Remove `wid` from the attached set (spec: DetachWorkspace, a control-plane surface that
    never deletes the workspace directory): its managed worktree, clean or not, stays on disk,
    listed as retained for the operator's review and explicit cleanup."""
    doc = read(agent.home)
    recover(agent, doc)
    if wid == HOME_ID:
        raise WorkspaceError(
            "the agent home cannot be detached",
            kind="cannot_detach_agent_home",
            hint="detach another workspace; agent_home is always attached",
        )
    if (doc.get("active") or {}).get("workspace_id") == wid:
        raise WorkspaceError(
            f"{wid} is the active workspace",
            kind="workspace_active",
            hint="switch to another workspace first (UseWorkspace workspace_id=agent_home, or "
            "`holon workspace use AGENT --id agent_home`), then detach it",
        )
    entry = _entry(doc, wid)
    out: dict[str, Any] = {"workspace_id": wid, "detached": True, "worktree": None}
    tree = entry.get("worktree")
    if tree:
        out["worktree"] = _retain(agent, doc, wid, tree)
    del doc["attached"][wid]
    _write(agent, doc)
    return out


def _retain(agent: Agent, doc: dict[str, Any], wid: str, tree: dict[str, Any]) -> dict[str, Any]:
    """Keep a detached workspace's worktree, recorded as retained with what it holds."""
    try:
        files = worktree.changed_files(Path(tree["path"]))
    except (HolonError, OSError):  # the worktree or its repository is gone or broken
        files = []
    reason = "uncommitted_changes" if files else "detached"
    result = {"removed": False, "retained_reason": reason, "changed_files": files}
    if result["retained_reason"]:
        kept = {
            "workspace_id": wid,
            "path": tree["path"],
            "branch": tree["branch"],
            "reason": result["retained_reason"],
            "changed_files": result["changed_files"][:200],
            "retained_at": clock.now_iso(),
        }
        doc.setdefault("retained", []).append(kept)
        agent.event("worktree_retained", **kept)
    return {**tree, **result}


def listing(agent: Agent) -> dict[str, Any]:
    """The active binding, every attached workspace (agent_home first) and retained worktrees."""
    doc = read(agent.home)
    active = binding(agent)
    rows = [{"workspace_id": HOME_ID, "anchor": os.fspath(agent.home.root), "exists": True}]
    for wid, entry in sorted(doc.get("attached", {}).items()):
        rows.append(
            {
                "workspace_id": wid,
                "anchor": entry["anchor"],
                "attached_at": entry.get("attached_at"),
                "exists": Path(entry["anchor"]).is_dir(),
                "worktree": entry.get("worktree"),
            }
        )
    for row in rows:
        row["active"] = row["workspace_id"] == active["workspace_id"]
    return {"active": active, "attached": rows, "retained": doc.get("retained", [])}

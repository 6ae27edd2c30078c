"""Where a private child works: its parent's active workspace (`inherit`), or a fresh git worktree
of it (`worktree`), kept in the supervision record and written as the child's workspace binding.

The binding is the parent's active entry (holon.agent.workspaces: `workspace_id`, anchor,
execution root, cwd, mode); a parent working in its own home lends the child that home as
workspace `parent_home`. A worktree lives at `$HOLON_HOME/worktrees/<child_id>/task` on branch
`holon/<child_id>/task`; at the task's end it is removed when clean and otherwise kept, with an
event (holon.tasks.child.childend).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from holon.agent import workspaces, worktree
from holon.agent.handle import Agent
from holon.paths import worktrees_dir
from holon.store.atomic import write_json
from holon.vocab import SCHEMA_VERSION

PARENT_HOME = workspaces.PARENT_HOME


class Refused(Exception):
    """A spawn that cannot happen: a stable kind, a message and what to do instead."""

    def __init__(self, kind: str, message: str, hint: str, **details: Any) -> None:
        super().__init__(message)
        self.kind, self.message, self.hint, self.details = kind, message, hint, details


def binding_for(agent: Agent, mode: str) -> dict[str, Any]:
    """The parent's active binding (holon.agent.workspaces) as the child's; `worktree` also
    checks that its anchor is in a git repository (else Refused `workspace_not_git`)."""
    bound = workspaces.binding(agent)
    binding = {
        k: bound.get(k) for k in ("workspace_id", "workspace_anchor", "execution_root", "cwd")
    }
    if binding["workspace_id"] == workspaces.HOME_ID:  # the parent's home, not the child's
        binding["workspace_id"] = PARENT_HOME
    binding.update(mode=bound.get("mode") or "direct", worktree=bound.get("worktree"))
    binding["projection_kind"] = bound.get("projection_kind") or "canonical_root"
    if mode == "worktree" and worktree.main_worktree(Path(binding["workspace_anchor"])) is None:
        raise Refused(
            "workspace_not_git",
            f"workspace_mode=worktree needs a git repository, and the active workspace "
            f"{binding['workspace_anchor']} is not one",
            "use workspace_mode=inherit, or make the workspace a git repository first",
            workspace_anchor=binding["workspace_anchor"],
        )
    return binding


def create_worktree(record: dict[str, Any]) -> dict[str, Any]:
    """A fresh worktree of the parent's workspace for the child, on its own branch."""
    anchor = worktree.main_worktree(Path(record["workspace"]["workspace_anchor"]))
    if anchor is None:
        raise Refused(
            "workspace_not_git",
            f"{record['workspace']['workspace_anchor']} is no longer a git repository",
            "use workspace_mode=inherit",
        )
    dest = worktrees_dir() / record["child_agent_id"] / "task"
    info = worktree.create(anchor, dest, f"holon/{record['child_agent_id']}/task")
    return {**info, "repo_anchor": str(anchor), "state": "ready"}


def bind(child: Agent, record: dict[str, Any]) -> None:
    """Write the child's workspace binding (idempotent: a resumed spawn repeats it)."""
    active = dict(record["workspace"])
    tree = record.get("worktree")
    if tree:
        active.update(
            execution_root=tree["path"],
            cwd=tree["path"],
            mode="isolated",
            projection_kind="git_worktree_root",
            worktree={k: tree.get(k) for k in ("path", "branch", "base_commit", "original_branch")}
            | {"state": "ready"},
        )
    doc = {"schema_version": SCHEMA_VERSION, "active": active, "attached": {}, "retained": []}
    if workspaces.read(child.home) != doc:
        with child.state_lock():
            write_json(child.home.workspace_json, workspaces.stored(doc))

            def project(s: Any) -> None:
                s.active_workspace_id, s.cwd = active["workspace_id"], active["cwd"]

            child.update_state(project)


def changed_files(record: dict[str, Any]) -> list[str]:
    tree = record.get("worktree")
    if not tree or not os.path.isdir(tree.get("path") or ""):
        return []
    try:
        return list(worktree.changed_files(Path(tree["path"])))
    except Exception:  # noqa: BLE001 - a projection never fails for a broken worktree
        return []


def drop_worktree(agent: Agent, record: dict[str, Any]) -> dict[str, Any] | None:
    """Remove the task's worktree when clean; keep it, with an event, when it holds changes."""
    tree = record.get("worktree")
    if not tree or tree.get("cleanup"):
        return tree.get("cleanup") if tree else None
    outcome = worktree.remove_if_clean(Path(tree["repo_anchor"]), tree)
    if outcome.get("removed"):
        try:  # $HOLON_HOME/worktrees/<child>/, when that was its only tree
            Path(tree["path"]).parent.rmdir()
        except OSError:
            pass  # gone already, or another tree of the child is still in it
    else:
        agent.event(
            "child_worktree_retained",
            task_id=record["id"],
            path=tree["path"],
            branch=tree.get("branch"),
            reason=outcome.get("retained_reason"),
            changed_files=outcome.get("changed_files"),
        )
    tree["cleanup"] = outcome
    return outcome

"""AgentSummary: the one agent summary that `AgentGet` returns and `holon status --json` embeds
(the spec's Agent Identity And Visibility and Agent Inspection Surface contracts: `/state.agent`
stays status-compatible with `/status`, so both are built here and nowhere else).

Built from persisted state only, as a plain dict: state.json as stored when it is current
(holon.home.stateview, no pydantic), else the validated and repaired AgentState, dumped. The
identity uses the spec's names: agent_id, agent_home, kind, visibility, ownership,
profile_preset and the lineage provenance (lineage_parent_agent_id; lineage_root_agent_id and
lineage_depth for a public agent another agent created; archived_at for an archived child)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from holon.agent import profiles, workitems, workspaces
from holon.agent.handle import Agent
from holon.home import stateview
from holon.home.layout import Home
from holon.tasks.child import children, childview

# shown when set: a public agent another agent created, and an archived child
LINEAGE_SHOWN = ("lineage_root_agent_id", "lineage_depth", "archived_at")
WORKSPACE_SHOWN = ("workspace_id", "execution_root", "cwd", "mode", "worktree")
Extend = Callable[[Agent, dict[str, Any]], dict[str, Any]]


def summary(agent: Agent, extend: Extend | None = None) -> dict[str, Any]:
    """The agent's summary; `extend(agent, state)` adds a surface's own sections after it."""
    stored = stateview.current(agent.home)
    if stored is not None:
        try:
            return summary_of(agent, dict(stored), extend)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a shape the light check let through: the full read decides
    return summary_of(agent, agent.state().model_dump(mode="json"), extend)


def summary_of(agent: Agent, state: dict[str, Any], extend: Extend | None = None) -> dict[str, Any]:
    """The summary of `agent` whose run state is `state` (AgentState as JSON)."""
    home = agent.home
    binding = workspaces.binding_of(home, state.get("active_workspace_id"), state.get("cwd"))
    current = workitems.get(home, state["current_work_item_id"] or "")
    kids = children.child_records(home, live_only=True, active_ids=state["active_task_ids"])
    out: dict[str, Any] = {
        "agent_id": home.agent_id,
        "identity": identity(home, agent.identity()),
        "status": state["status"],
        "closure": state["closure"],
        "active_workspace": {k: binding.get(k) for k in WORKSPACE_SHOWN},
        "current_work_item": {
            "work_item_id": current["id"],
            "objective": current.get("objective"),
            "state": current.get("state"),
            "scheduling_state": workitems.scheduling_state(
                current, workitems.wait_facts(home, state["active_task_ids"])
            ),
        }
        if current
        else None,
        "token_usage": state["token_usage"],
        "active_task_ids": list(state["active_task_ids"]),
        "loaded_agents_md": agents_md(home, binding.get("execution_root")),
        "active_children": [childview.projection(r) for r in kids],
    }
    return out | (extend(agent, state) if extend else {})


def identity(home: Home, ident: dict[str, Any]) -> dict[str, Any]:
    """Who the agent is, with the values an agent.json without them means, its effective
    profile preset (holon.agent.profiles) and its lineage provenance."""
    return {
        "agent_id": home.agent_id,
        "agent_home": str(home.root),
        "kind": ident.get("kind", "named"),
        "visibility": ident.get("visibility", "public"),
        "ownership": ident.get("ownership", "self_owned"),
        "profile_preset": profiles.preset_of(home),
        "lineage_parent_agent_id": ident.get("lineage_parent_agent_id"),
    } | {key: ident[key] for key in LINEAGE_SHOWN if ident.get(key) is not None}


def agents_md(home: Home, workspace_root: str | None) -> list[dict[str, Any]]:
    """Source metadata of the AGENTS.md files a turn loads (scope, path, bytes), never their
    content; one that is missing, a symlink loop or cannot be looked at is left out (the prompt
    refuses it then: holon.confined)."""
    paths = [("agent", os.fspath(home.agents_md))]
    if workspace_root and os.path.abspath(workspace_root) != os.path.abspath(home.root):
        for name in ("AGENTS.md", "CLAUDE.md"):
            candidate = os.path.join(workspace_root, name)
            if os.path.isfile(candidate):
                paths.append(("workspace", candidate))
                break
    out = []
    for scope, path in paths:
        try:
            out.append({"scope": scope, "path": path, "bytes": os.stat(path).st_size})
        except OSError:
            continue
    return out

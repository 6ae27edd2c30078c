"""The `holon status` document: the agent's summary (holon.tasks.agentsummary, the same one
AgentGet returns), then the operator's sections, from persisted state only."""

from __future__ import annotations

import os
from typing import Any

from holon import clock
from holon.agent import autonomy, budget, nextdue, timers, triggers, workitems
from holon.agent.handle import Agent
from holon.context import window
from holon.errors import HolonError
from holon.home.layout import Home
from holon.sandbox import confine
from holon.tasks import agentsummary


def _count(path: os.PathLike) -> int:
    try:
        return sum(1 for e in os.scandir(path) if not e.name.startswith("."))
    except FileNotFoundError:
        return 0


def agent_summary(home: Home) -> dict[str, Any]:
    """The agent's summary (holon.tasks.agentsummary, the one AgentGet returns) followed by the
    operator's sections: home, queue, tasks, sandbox, model, budget, context and lifecycle."""
    return agentsummary.summary(Agent(home).ensure(), _operator_sections)


def summary_of(agent: Agent, state: dict[str, Any]) -> dict[str, Any]:
    """The document of `agent` whose run state is `state` (AgentState as JSON)."""
    return agentsummary.summary_of(agent, state, _operator_sections)


def _operator_sections(agent: Agent, state: dict[str, Any]) -> dict[str, Any]:
    home = agent.home
    queue = home.queue
    summary_model = budget.model_state(state.get("model_override"))
    summary: dict[str, Any] = {
        "home": str(home.root),
        "last_continuation": state["last_continuation"],
        "queue": {
            "pending": len(queue.pending()),
            "in_progress": len(queue.in_progress()),
            "dead_letters": len(queue.dead_letters()),
            # put back after a provider outage, each with its not-before time
            "deferred": len(deferred := queue.deferred()),
            "next_not_before": clock.iso(min(t for _, t in deferred)) if deferred else None,
        },
        "tasks": {"active": _count(home.tasks_active)},
        "sandbox": confine.summary(home),
        "model": summary_model,
        "budget": _budget(agent, state),
        "last_turn": state["last_turn"],
        "sleeping_until": state["sleeping_until"],
        "last_tick_at": state["last_tick_at"],
        "last_brief_at": state["last_brief_at"],
        "context": _context(state, summary_model),
    }
    if state["status"] == "stopped":
        summary["lifecycle_hint"] = (
            f"stopped: run `holon resume {home.agent_id}` before sending new prompts; "
            "`holon wake` does not cross the stopped boundary"
        )
    elif state["status"] == "paused":
        summary["lifecycle_hint"] = (
            f"paused: queued work waits until `holon resume {home.agent_id}`"
        )
    if summary["budget"].get("hold"):
        summary["queue"]["held_by_budget"] = summary["queue"]["pending"]
    summary.update(_lifecycle(home, state))
    return summary


def _budget(agent: Agent, state: dict[str, Any]) -> dict[str, Any]:
    """The token budgets in force, today's use (with private children's), the hold a spent
    daily budget puts on the queue (holon.agent.budget.daily_hold), or the error reading them;
    and the self-driven turns in a row against their cap (holon.agent.autonomy)."""
    driven = autonomy.status(int(state.get("self_driven_turns") or 0))
    try:
        return {
            "limits": budget.limits(agent),
            "used_today": budget.family_usage_today(agent.home),
            "hold": budget.daily_hold(agent),
            "self_driven_turns": driven,
        }
    except HolonError as exc:
        error = {"kind": exc.kind, "message": exc.message, "hint": exc.hint}
        return {"error": error, "self_driven_turns": driven}


def _lifecycle(home: Home, state: dict[str, Any]) -> dict[str, Any]:
    """Work items by readiness, timers, the external trigger, a pending wake hint, and next due."""
    counts: dict[str, int] = {}
    facts = workitems.wait_facts(home, state["active_task_ids"])
    for rec in workitems.load_all(home).values():
        label = workitems.readiness(rec, state["current_work_item_id"], facts)
        counts[label] = counts.get(label, 0) + 1
    due = nextdue.read(home)
    return {
        "work_items": counts,
        "timers": [
            {"id": t["id"], "schedule": t["schedule"], "due_at": t["due_at"]}
            for t in timers.load(home)
        ],
        "external_trigger": triggers.show(home),
        "pending_wake_hint": state["pending_wake_hint"],
        "next_due_at": clock.iso(due) if due is not None else None,
    }


def _context(state: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """Context use against the compaction budget and against the window, episodes and the last
    compaction, from state alone."""
    ctx, wm = state["context"], state["working_memory"]
    last = ctx["last_request"] or {}
    ref = last.get("model_ref") or model.get("effective_model")
    window_tokens = last.get("context_window") or (window.configured_window(ref) if ref else None)
    used = last.get("input_tokens") or last.get("estimated_tokens")
    budget = last.get("prompt_budget")
    return {
        "model_ref": ref,
        "context_window": window_tokens,
        "configured_window": window.configured_window(ref) if ref else None,
        "learned_window": ctx["learned_window"].get(ref) if ref else None,
        "prompt_budget": budget,
        "last_request_tokens": used,
        "last_request_estimated_tokens": last.get("estimated_tokens"),
        "last_request_cached_tokens": last.get("cache_read_input_tokens"),
        "use_of_window": round(used / window_tokens, 3) if used and window_tokens else None,
        # the prompt is compacted when it would pass the budget: this is how near that is
        "use_of_budget": round(used / budget, 3) if used and budget else None,
        "calibration_ratio": ctx["calibration"].get(ref) if ref else None,
        "episodes": wm["archived_episode_count"],
        "open_episode_turns": (wm["active_episode_builder"] or {}).get("turns", 0),
        "compactions": ctx["compression_epoch"],
        "compacted_turns": ctx["compacted_turns"],
        "last_compaction": ctx["last_compaction"],
        "working_memory_revision": wm["revision"],
    }

"""The work queue at runtime: prompt projection, closure signals, activation, rechecks, reminders."""

from __future__ import annotations

from typing import Any

from holon import clock, config
from holon.agent import workitems
from holon.agent.handle import Agent

MUTATION_TOOLS = ("CreateWorkItem", "PickWorkItem", "UpdateWorkItem", "CompleteWorkItem")
CANDIDATE_ORDER = ("triggered_blocked", "queued_runnable", "waiting_for_operator", "blocked", "completed_recent")
RECENT_COMPLETED = 5
TRACE_ENTRIES = 12


# -- prompt projection ---------------------------------------------------------

def projection(agent: Agent) -> str | None:
    """The work-queue context block, or None when no work items exist (message-driven path)."""
    items = workitems.load_all(agent.home)
    if not items:
        return None
    state = agent.state()
    current = items.get(state.current_work_item_id or "")
    summaries = workitems.delivery_summaries(agent.home)
    lines = ["# Work queue"]
    if current and current.get("state") == "open":
        lines += ["## Current work item", _full(agent, current)]
        trace = _trace(agent, current["id"])
        if trace:
            lines += ["### Recent progress on this item", *trace]
    else:
        lines.append("No current work item. Call PickWorkItem to focus on one of the candidates.")
    groups: dict[str, list[str]] = {k: [] for k in CANDIDATE_ORDER}
    completed = [r for r in items.values() if r.get("state") == "completed"]
    for rec in items.values():
        label = workitems.readiness(rec, state.current_work_item_id)
        if label in ("current", "completed"):
            continue
        extra = f" — blocked by: {rec['blocked_by']}" if rec.get("blocked_by") else ""
        groups[label].append(f"- {rec['id']} [{rec.get('plan_status')}] {rec['objective']}{extra}")
    for rec in sorted(completed, key=lambda r: r.get("updated_at", ""))[-RECENT_COMPLETED:]:
        summary = summaries.get(rec["id"])
        if summary:  # completed items appear only through their promoted report
            groups["completed_recent"].append(f"- {rec['id']} {rec['objective']}\n  report: {summary['text']}")
    for label in CANDIDATE_ORDER:
        if groups[label]:
            lines += [f"## {label}", *groups[label]]
    return "\n".join(lines)


def _full(agent: Agent, rec: dict[str, Any]) -> str:
    out = [f"id: {rec['id']}", f"objective: {rec['objective']}", f"plan_status: {rec.get('plan_status')}"]
    art = workitems.plan_artifact(agent.home, rec["id"])
    if art:
        done = "complete" if art["preview_complete"] else "truncated; read the file for the rest"
        out.append(f"plan artifact: {art['path']} ({art['bytes']} bytes, preview {done})\n{art['preview']}")
    for todo in rec.get("todo_list") or []:
        out.append(f"- [{todo.get('state')}] {todo.get('text')}")
    if rec.get("blocked_by"):
        out.append(f"blocked_by: {rec['blocked_by']} (recheck at {rec.get('recheck_at')})")
    tasks = agent.state().active_task_ids
    if tasks:
        out.append(f"active tasks: {', '.join(tasks)}")
    return "\n".join(out)


def _trace(agent: Agent, work_item_id: str) -> list[str]:
    from holon.store import jsonl

    lines = []
    for brief in jsonl.tail(agent.home.briefs, 50):
        if brief.get("work_item_id") == work_item_id and brief.get("text"):
            lines.append(f"- brief: {brief['text'][:300]}")
    return lines[-TRACE_ENTRIES:]


# -- closure signals and the turn-end commit ---------------------------------------

def closure_signals(agent: Agent, effects: dict[str, Any], bound_id: str | None) -> dict[str, Any]:
    """waiting_reason / work_signal for the settled turn, after committing the bound item's blocker."""
    state = agent.state()
    items = workitems.load_all(agent.home)
    _commit_bound(agent, items.get(bound_id or ""), effects, state)
    items = workitems.load_all(agent.home)
    current = items.get(state.current_work_item_id or "")
    if current and current.get("state") == "open":
        sched = workitems.scheduling_state(current)
        if sched == "waiting_operator":
            return {"waiting_reason": "awaiting_operator_input"}
        if sched == "blocked":
            return {"waiting_reason": "awaiting_task_result" if state.active_task_ids
                    else "awaiting_external_change"}
        if not effects.get("sleep"):
            return {"work_signal": {"work_item_id": current["id"], "status": "active",
                                    "reactivation_mode": "continue_active"}}
    elif not effects.get("sleep"):
        queued = [r for r in items.values() if workitems.readiness(r, state.current_work_item_id)
                  == "queued_runnable"]
        if queued:
            return {"work_signal": {"work_item_id": queued[0]["id"], "status": "queued",
                                    "reactivation_mode": "activate_queued"}}
    if effects.get("sleep", {}).get("until"):
        return {"waiting_reason": "awaiting_timer"}
    if state.active_task_ids:
        return {"waiting_reason": "awaiting_task_result"}
    return {}


def _commit_bound(agent: Agent, bound: dict[str, Any] | None, effects: dict[str, Any], state: Any) -> None:
    """Runtime facts show a blocking wait (the turn slept on active tasks): record it on the bound item."""
    if not bound or bound.get("state") != "open" or bound.get("blocked_by"):
        return
    if effects.get("sleep") is not None and state.active_task_ids:
        rec = dict(bound)
        workitems.set_blocker(rec, f"waiting for task result: {', '.join(state.active_task_ids)}", None)
        workitems.append(agent, rec)
        agent.event("work_item_blocker_committed", work_item_id=rec["id"], blocked_by=rec["blocked_by"])


# -- activation and recheck reminders (run by the tick under the turn lock) -------

def fire_due(agent: Agent, *, activate: bool) -> list[str]:
    fired = _rechecks(agent)
    if activate and not agent.home.queue.has_pending():
        fired += _activate(agent)
    return fired


def _rechecks(agent: Agent) -> list[str]:
    from holon.agent import admission, nextdue

    due = workitems.due_rechecks(agent.home, clock.now_ts())
    out = []
    for rec in due:
        text = (f"Recheck reminder for work item {rec['id']} ({rec['objective']}): it is blocked by "
                f"\"{rec['blocked_by']}\" since before {rec['recheck_at']}. Inspect the blocker; update or "
                "clear blocked_by with UpdateWorkItem. This reminder does not change the item.")
        env = admission.admit(agent.home, "runtime", "system_tick", admission.text_body(text),
                              source="work_item_recheck", priority="background", work_item_id=rec["id"],
                              metadata={"reason": "work_item_recheck"})
        workitems.append(agent, {**rec, "recheck_consumed_at": clock.now_iso()})
        out.append(env["id"])
    if due:
        nextdue.refresh(agent.home)
    return out


def _activate(agent: Agent) -> list[str]:
    from holon.agent import admission, nextdue

    state = agent.state()
    closure = state.closure or {}
    signal = closure.get("work_signal")
    if (state.status.value != "awake_idle" or closure.get("outcome") != "continuable" or not signal
            or closure.get("activation_message_id")):
        return []
    rec = workitems.get(agent.home, signal["work_item_id"])
    if rec is None or workitems.scheduling_state(rec) != "runnable":
        return []
    if signal["reactivation_mode"] == "continue_active":
        text = f"Continue work item {rec['id']}: {rec['objective']}"
    else:
        text = "Runnable work items are queued and none is current; pick one with PickWorkItem and continue."
    env = admission.admit(agent.home, "runtime", "system_tick", admission.text_body(text), source="work_queue",
                          work_item_id=rec["id"], metadata={"reason": signal["reactivation_mode"]})

    def consumed(s: Any) -> None:
        if s.closure:
            s.closure = {**s.closure, "activation_message_id": env["id"]}
    agent.update_state(consumed)
    nextdue.refresh(agent.home)
    return [env["id"]]


# -- stale-progress reminder (provider-only, never persisted) ------------------------

def stale_reminder(agent: Agent, rounds: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> str | None:
    threshold = config.env_int("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "runtime.work_item_stale_reminder_rounds", 8)
    cooldown = max(1, config.env_int("HOLON_WORK_ITEM_STALE_REMINDER_COOLDOWN_ROUNDS",
                                     "runtime.work_item_stale_reminder_cooldown_rounds", 8))
    max_tokens = config.env_int("HOLON_WORK_ITEM_STALE_REMINDER_MAX_TOKENS",
                                "runtime.work_item_stale_reminder_max_tokens", 400)
    if threshold <= 0 or not rounds:
        return None
    stale = 0
    for index in range(len(rounds) - 1, -1, -1):
        if any(r.get("tool_name") in MUTATION_TOOLS and r.get("status") == "success"
               and r["key"].startswith(f"{index}:") for r in results.values()):
            break
        stale += 1
    if stale < threshold or (stale - threshold) % cooldown:
        return None
    state = agent.state()
    rec = workitems.get(agent.home, state.current_work_item_id or "")
    if rec is None or rec.get("state") != "open":
        return None
    todos = [t for t in rec.get("todo_list") or [] if t.get("state") != "completed"]
    lines = [f"[runtime reminder] {stale} provider rounds without a work-item update. Current item "
             f"{rec['id']}: {rec['objective']} (plan_status {rec.get('plan_status')})."]
    lines += [f"- [{t.get('state')}] {t.get('text')}" for t in todos]
    if rec.get("blocked_by"):
        lines.append(f"blocked_by: {rec['blocked_by']}")
    lines.append("If you made material progress, hit a blocker or changed scope, record it with UpdateWorkItem; "
                 "otherwise carry on.")
    return "\n".join(lines)[: max(1, max_tokens) * 4]

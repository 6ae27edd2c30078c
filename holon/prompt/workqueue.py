"""The work queue as the model sees it: the work-queue context block and the stale-progress
reminder."""

from __future__ import annotations

from typing import Any

from holon import config
from holon.agent import workitems
from holon.agent.handle import Agent
from holon.store import jsonl

MUTATION_TOOLS = ("CreateWorkItem", "PickWorkItem", "UpdateWorkItem", "CompleteWorkItem")
CANDIDATE_ORDER = (
    "triggered_blocked",
    "queued_runnable",
    "waiting_for_operator",
    "blocked",
    "completed_recent",
)
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
            groups["completed_recent"].append(
                f"- {rec['id']} {rec['objective']}\n  report: {summary['text']}"
            )
    for label in CANDIDATE_ORDER:
        if groups[label]:
            lines += [f"## {label}", *groups[label]]
    return "\n".join(lines)


def _full(agent: Agent, rec: dict[str, Any]) -> str:
    out = [
        f"id: {rec['id']}",
        f"objective: {rec['objective']}",
        f"plan_status: {rec.get('plan_status')}",
    ]
    art = workitems.plan_artifact(agent.home, rec["id"])
    if art and "refused" in art:
        why = art["refused"]
        out.append(f"plan artifact: {art['path']} not read: {why['detail']} ({why['reason']})")
    elif art:
        done = "complete" if art["preview_complete"] else "truncated; read the file for the rest"
        out.append(
            f"plan artifact: {art['path']} ({art['bytes']} bytes, preview {done})\n{art['preview']}"
        )
    for todo in rec.get("todo_list") or []:
        out.append(f"- [{todo.get('state')}] {todo.get('text')}")
    if rec.get("blocked_by"):
        out.append(f"blocked_by: {rec['blocked_by']} (recheck at {rec.get('recheck_at')})")
    tasks = agent.state().active_task_ids
    if tasks:
        out.append(f"active tasks: {', '.join(tasks)}")
    return "\n".join(out)


def _trace(agent: Agent, work_item_id: str) -> list[str]:
    lines = []
    for brief in jsonl.tail(agent.home.briefs, 50):
        if brief.get("work_item_id") == work_item_id and brief.get("text"):
            lines.append(f"- brief: {brief['text'][:300]}")
    return lines[-TRACE_ENTRIES:]


# -- stale-progress reminder (provider-only, never persisted) ------------------------


def stale_reminder(
    agent: Agent, rounds: list[dict[str, Any]], results: dict[str, dict[str, Any]]
) -> str | None:
    threshold = config.env_int(
        "HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "runtime.work_item_stale_reminder_rounds", 8
    )
    cooldown = max(
        1,
        config.env_int(
            "HOLON_WORK_ITEM_STALE_REMINDER_COOLDOWN_ROUNDS",
            "runtime.work_item_stale_reminder_cooldown_rounds",
            8,
        ),
    )
    max_tokens = config.env_int(
        "HOLON_WORK_ITEM_STALE_REMINDER_MAX_TOKENS",
        "runtime.work_item_stale_reminder_max_tokens",
        400,
    )
    if threshold <= 0 or not rounds:
        return None
    progressed = {
        r["key"].split(":", 1)[0]
        for r in results.values()
        if r.get("tool_name") in MUTATION_TOOLS and r.get("status") == "success"
    }
    stale = 0
    for index in range(len(rounds) - 1, -1, -1):
        if str(index) in progressed:
            break
        stale += 1
    if stale < threshold or (stale - threshold) % cooldown:
        return None
    state = agent.state()
    rec = workitems.get(agent.home, state.current_work_item_id or "")
    if rec is None or rec.get("state") != "open":
        return None
    todos = [t for t in rec.get("todo_list") or [] if t.get("state") != "completed"]
    lines = [
        f"[runtime reminder] {stale} provider rounds without a work-item update. Current item "
        f"{rec['id']}: {rec['objective']} (plan_status {rec.get('plan_status')})."
    ]
    lines += [f"- [{t.get('state')}] {t.get('text')}" for t in todos]
    if rec.get("blocked_by"):
        lines.append(f"blocked_by: {rec['blocked_by']}")
    lines.append(
        "If you made material progress, hit a blocker or changed scope, record it with "
        "UpdateWorkItem; otherwise carry on."
    )
    return "\n".join(lines)[: max(1, max_tokens) * 4]

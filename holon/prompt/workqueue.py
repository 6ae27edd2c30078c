"""The work queue as the model sees it: the work-queue context block and the stale-progress
reminder."""

from __future__ import annotations

from typing import Any

from holon import config
from holon.agent import workitems
from holon.agent.handle import Agent
from holon.safetext import one_line
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
TRACE_RECORDS = 400  # transcript records looked back through for the trace
TRACE_CHARS = 300


# -- prompt projection ---------------------------------------------------------


def projection(agent: Agent) -> str | None:
    """The work-queue context block, or None when no work items exist (message-driven path)."""
    items = workitems.load_all(agent.home)
    if not items:
        return None
    state = agent.state()
    facts = workitems.wait_facts(agent.home, state.active_task_ids)
    current = items.get(state.current_work_item_id or "")
    summaries = workitems.delivery_summaries(agent.home)
    lines = ["# Work queue"]
    if current and current.get("state") == "open":
        lines += ["## Current work item", _full(agent, current, facts)]
        trace = _trace(agent, current["id"])
        if trace:
            lines += ["### Recent progress on this item", *trace]
    else:
        lines.append("No current work item. Call PickWorkItem to focus on one of the candidates.")
    groups: dict[str, list[str]] = {k: [] for k in CANDIDATE_ORDER}
    completed = [r for r in items.values() if r.get("state") == "completed"]
    for rec in items.values():
        label = workitems.readiness(rec, state.current_work_item_id, facts)
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


def _full(agent: Agent, rec: dict[str, Any], facts: dict[str, Any]) -> str:
    out = [
        f"id: {rec['id']}",
        f"objective: {rec['objective']}",
        f"plan_status: {rec.get('plan_status')}",
        f"scheduling_state: {workitems.scheduling_state(rec, facts)}",
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
    """The item's recent process trace (spec, Work-Queue Prompt Projection), in order: its
    briefs, and the assistant text blocks and tool executions (name and status, never their
    output) of the turns whose brief binds to it. Provider thinking is not in these records,
    and the transcript is this agent's own."""
    records = jsonl.tail(agent.home.transcript, TRACE_RECORDS)
    turns = {r["turn_id"] for r in records if _bound_brief(r, work_item_id) and r.get("turn_id")}
    lines = []
    for rec in records:
        if _bound_brief(rec, work_item_id):
            lines.append(f"- brief: {one_line(rec['data']['brief']['text'], TRACE_CHARS)}")
        elif rec.get("turn_id") in turns and (step := _step(rec.get("data") or {}, rec["kind"])):
            lines.append(step)
    return lines[-TRACE_ENTRIES:]


def _bound_brief(rec: dict[str, Any], work_item_id: str) -> bool:
    brief = (rec.get("data") or {}).get("brief") if rec.get("kind") == "brief" else None
    return bool(brief and brief.get("work_item_id") == work_item_id and brief.get("text"))


def _step(data: dict[str, Any], kind: str) -> str | None:
    if kind == "assistant_round" and str(data.get("text") or "").strip():
        return f"- assistant: {one_line(str(data['text']), TRACE_CHARS)}"
    if kind == "tool_result" and data.get("tool_name"):
        return f"- tool {one_line(str(data['tool_name']), 64)}: {data.get('status')}"
    return None


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

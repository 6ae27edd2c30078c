"""The operator event presentation layer: one audit event -> one operator record.

A record is derived from one event of `ledger/events.jsonl` and nothing else, so the feed, the
notify hook and `holon prompt -v` replay the same records from any `event_seq`:

    {schema_version, agent_id, event_id, event_seq, at, visibility, category, title,
     body (optional), summary, source_event_kind, provenance}

`visibility` orders records from most operator-facing to most diagnostic (VISIBILITIES); a display
level (info, verbose, debug) shows a prefix of that order (`shown`). `provenance` holds the ids the
event names (message, task, work item, turn, correlation, causation) and, for an admitted message,
its origin, trust, authority class, delivery surface and admission context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from holon.text import shorten

VISIBILITIES = ("action_required", "work_done", "turn_result", "progress", "trace")
LEVELS = {"info": 3, "verbose": 4, "debug": 5}  # how many visibilities a level shows
SUMMARY_CHARS = 200
PROVENANCE_KEYS = (
    "message_id",
    "task_id",
    "work_item_id",
    "turn_id",
    "correlation_id",
    "causation_id",
    "origin",
    "trust",
    "authority_class",
    "delivery_surface",
    "admission_context",
    "external_trigger_id",
    "timer_id",
)
_BRIEF_TITLES = {
    "action_required": "Action required",
    "work_done": "Work done",
    "turn_result": "Turn result",
}

Shape = tuple[str, str, str, Callable[[dict[str, Any]], str]]


def _say(text: str) -> Callable[[dict[str, Any]], str]:
    return lambda d: text.format_map(_Blank(d))


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _assistant(d: dict[str, Any]) -> str:
    preview = (d.get("text_preview") or "").strip()
    tools = [t for t in d.get("tool_names") or [] if isinstance(t, str)]
    if preview:
        return f"Assistant progress: {preview}"
    if tools:
        return "Model requested tools: " + ", ".join(tools)
    return f"Model round {d.get('round_index', '?')} finished with no text and no tools"


def _tool(d: dict[str, Any]) -> str:
    ms = d.get("duration_ms")
    took = f" in {ms} ms" if isinstance(ms, int) else ""
    row = f"{d.get('tool_name', '?')}: {d.get('status', '?')}{took}"
    error = d.get("tool_error")
    if isinstance(error, dict) and error.get("message"):
        row += f" ({error['message']})"
    return row


def _deferred(d: dict[str, Any]) -> str:
    return f"Provider unavailable: message deferred until {d.get('not_before', '?')}" + (
        f" ({d['summary']})" if d.get("summary") else ""
    )


def _terminal(d: dict[str, Any]) -> str:
    return f"Turn {d.get('kind', '?')} after {d.get('rounds', '?')} round(s)"


# event kind -> (visibility, category, title, summary); brief_recorded takes its visibility
# from the brief; a kind not listed is a trace record titled by its kind
SHAPES: dict[str, Shape] = {
    "assistant_round_recorded": ("progress", "assistant progress", "Assistant", _assistant),
    "tool_executed": ("trace", "tool", "Tool", _tool),
    "message_deferred": ("progress", "waiting", "Provider outage", _deferred),
    "message_dead_lettered": (
        "progress",
        "message",
        "Dead letter",
        _say("Message {message_id} set aside {reason}"),
    ),
    "message_admitted": (
        "trace",
        "message",
        "Message",
        _say("{message_kind} {message_id} admitted from {delivery_surface}"),
    ),
    "sleep_requested": ("progress", "waiting", "Sleep", _say("Sleeping until {until}")),
    "work_item_created": (
        "progress",
        "work item",
        "Work item",
        _say("Work item {work_item_id} created"),
    ),
    "work_item_completed": (
        "progress",
        "work item",
        "Work item",
        _say("Work item {work_item_id} completed"),
    ),
    "child_spawned": (
        "progress",
        "task",
        "Child agent",
        _say("Child agent {child_agent_id} started (task {task_id})"),
    ),
    "task_recovered": ("progress", "task", "Task", _say("Task {task_id} recovered as {status}")),
    "timer_fired": ("progress", "runtime", "Timer", _say("Timer {timer_id} fired")),
    "runtime_error": ("trace", "runtime", "Runtime error", _say("{error}")),
    "turn_terminal": ("trace", "runtime", "Turn", _terminal),
    "notify_hook_failed": (
        "progress",
        "operator notification",
        "Notify hook failed",
        _say("Notify hook failed on event {record_seq}: {problem}"),
    ),
    "home_commit_failed": ("progress", "runtime", "Commit failed", _say("{error}")),
    "agent_state_changed": ("trace", "state sync", "State", _say("State changed")),
    "state_rebuilt": ("trace", "state sync", "State", _say("Run state rebuilt")),
}
for _action in ("paused", "resumed", "stopped", "woken"):
    SHAPES[f"agent_{_action}"] = (
        "progress",
        "runtime",
        "Lifecycle",
        _say("Agent {previous_status} -> {status}"),
    )


def _escalation(d: dict[str, Any]) -> str:
    return f"Child agent {d.get('child_agent_id', '?')} asks: {d.get('text') or '(no text)'}"


def present(event: dict[str, Any]) -> dict[str, Any]:
    """The operator record of one audit event."""
    kind = str(event.get("kind") or "unknown")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    body = None
    if kind == "child_escalated":  # a private child's NotifyOperator, routed to this parent
        urgent = data.get("visibility") == "action_required"
        visibility, category = ("action_required" if urgent else "progress"), "child agent"
        title, summary = "Child escalation", shorten(_escalation(data), SUMMARY_CHARS)
        body = str(data.get("text") or "") or None
    elif kind == "brief_recorded":
        visibility = data.get("visibility")
        if visibility not in _BRIEF_TITLES:
            visibility = "turn_result"
        text = str(data.get("text") or "")
        category = "brief"
        title = _BRIEF_TITLES[visibility] + (
            " (failure)" if data.get("brief_kind") == "failure" else ""
        )
        summary, body = shorten(text, SUMMARY_CHARS) or "(no text)", text or None
    else:
        visibility, category, title, say = SHAPES.get(kind) or (
            "trace",
            "trace",
            kind,
            lambda d: f"{kind}: {scalar_fields(d)}".rstrip(": "),
        )
        summary = shorten(say(data), SUMMARY_CHARS)
    record: dict[str, Any] = {
        "schema_version": 1,
        "agent_id": event.get("agent_id"),
        "event_id": event.get("id"),
        "event_seq": event.get("event_seq"),
        "at": event.get("created_at"),
        "visibility": visibility,
        "category": category,
        "title": title,
        "summary": summary,
        "source_event_kind": kind,
        "provenance": {k: data[k] for k in PROVENANCE_KEYS if data.get(k) not in (None, "")},
    }
    if body is not None:
        record["body"] = body
    return record


def scalar_fields(data: dict[str, Any]) -> str:
    """A generic one-line summary: the event's scalar fields (as `holon events` prints them)."""
    return ", ".join(
        f"{k}={v}" for k, v in data.items() if isinstance(v, (str, int, float)) and k != "error"
    )


def shown(record: dict[str, Any], level: str) -> bool:
    """Whether a display level shows the record: info the first three visibilities, verbose adds
    progress and the curated tool rows, debug adds every trace record."""
    rank = VISIBILITIES.index(record["visibility"])
    if rank < LEVELS[level]:
        return True
    return level == "verbose" and record["category"] == "tool"


def line(record: dict[str, Any]) -> str:
    """One human line: time, agent, event_seq, visibility, title and summary (the title is left
    out when the summary already starts with it: `Assistant progress: ...`)."""
    title, summary = record["title"], record["summary"]
    said = summary.lower().startswith(title.split(" ")[0].lower()) if title else True
    return (
        f"{record['at']} {record['agent_id']} #{record['event_seq']} [{record['visibility']}] "
        + (summary if said else f"{title}: {summary}")
    )

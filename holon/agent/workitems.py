"""Work items: `ledger/work_items.jsonl` (latest record per id wins) and `work-items/<id>/plan.md`.

Queued, blocked and completed are derived views; current focus lives in
`AgentState.current_work_item_id`. A completed item's operator-facing report is
a DeliverySummaryRecord (`ledger/delivery_summaries.jsonl`), promoted from the
assistant text of the round that called CompleteWorkItem.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import TYPE_CHECKING, Any

from holon import clock, config, confined
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home.layout import Home
from holon.ids import new_id
from holon.store import jsonl
from holon.store.atomic import write_text
from holon.vocab import SCHEMA_VERSION

if TYPE_CHECKING:  # the record's keys, typed (stdlib, but kept off the light path)
    from holon.model.dicts import WorkItem

PLAN_STATUSES = ("draft", "ready", "needs_input")
ITEM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # names a directory under work-items/
DEFAULT_RECHECK_MS = 60 * 60 * 1000
PREVIEW_CHARS = 1200
PLAN_BYTES = 16 << 20  # a plan larger than this is refused, not read


def default_recheck_ms() -> int:
    return max(
        1,
        config.env_int(
            "HOLON_WORK_ITEM_DEFAULT_RECHECK_MS",
            "runtime.work_item_default_recheck_ms",
            DEFAULT_RECHECK_MS,
        ),
    )


def load_all(home: Home) -> dict[str, dict[str, Any]]:
    """Every work item, latest record per id, in creation order."""
    items: dict[str, dict[str, Any]] = {}
    for rec in jsonl.read(home.work_items):
        item_id = rec.get("id") if isinstance(rec, dict) else None
        if isinstance(item_id, str) and ITEM_ID.fullmatch(item_id):
            items[rec["id"]] = rec
    return items


def recheck_ts(record: dict[str, Any]) -> float | None:
    """When an open, blocked item is to be looked at again; None when it is not waiting for a
    recheck, or its recheck_at is not a time (a hand-edited ledger line never stops a tick)."""
    at = record.get("recheck_at")
    if not (
        record.get("state") == "open"
        and record.get("blocked_by")
        and isinstance(at, str)
        and not record.get("recheck_consumed_at")
    ):
        return None
    try:
        return clock.parse_iso(at).timestamp()
    except (ValueError, OverflowError):
        return None


def get(home: Home, work_item_id: str) -> dict[str, Any] | None:
    return load_all(home).get(work_item_id)


def write_plan(home: Home, work_item_id: str, text: str) -> None:
    path = home.plan_path(work_item_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text if text.endswith("\n") or not text else text + "\n")


def plan_artifact(home: Home, work_item_id: str) -> dict[str, Any] | None:
    """The plan file's path, hash, size and preview, None without one. It is read beneath the
    agent home (holon.confined): a symlink out of it, a FIFO, a directory or a file over
    PLAN_BYTES gives only {"path", "refused": {path, reason, detail}}."""
    path = home.plan_path(work_item_id)
    try:
        found = confined.read(home.root, path.relative_to(home.root), PLAN_BYTES)
    except confined.Refused as exc:
        return {"path": str(path), "refused": exc.to_dict()}
    if found is None:
        return None
    text = found.text
    return {
        "path": str(path),
        "hash": "sha256:" + hashlib.sha256(found.data).hexdigest(),
        "bytes": len(found.data),
        "updated_at": clock.iso(found.mtime_ns / 1e9),
        "preview": text[:PREVIEW_CHARS],
        "preview_complete": len(text) <= PREVIEW_CHARS,
    }


def new_record(
    agent_id: str,
    objective: str,
    *,
    plan_status: str = "draft",
    todo_list: list[dict[str, str]] | None = None,
) -> WorkItem:
    now = clock.now_iso()
    return {
        "schema_version": SCHEMA_VERSION,
        "id": new_id("wi"),
        "agent_id": agent_id,
        "workspace_id": "agent_home",
        "objective": objective,
        "state": "open",
        "plan_status": plan_status,
        "todo_list": todo_list or [],
        "blocked_by": None,
        "recheck_at": None,
        "recheck_consumed_at": None,
        "result_summary": None,
        "wait": None,
        "created_at": now,
        "updated_at": now,
    }


def append(agent: Agent, record: dict[str, Any]) -> dict[str, Any]:
    """Persist a new version of `record`. A recheck deadline reaches next_due when the caller's
    command or tick ends (holon.agent.nextdue.refresh)."""
    record = {**record, "updated_at": clock.now_iso()}
    with agent.state_lock():
        jsonl.append(agent.home.work_items, record)
    agent.home.mark_memory_dirty()
    return record


def set_blocker(
    record: dict[str, Any], blocked_by: str | None, recheck_after_ms: int | None
) -> None:
    if blocked_by:
        record["blocked_by"] = blocked_by
        delay = recheck_after_ms if recheck_after_ms else default_recheck_ms()
        record["recheck_at"] = clock.iso(clock.now_ts() + delay / 1000)
        record["recheck_consumed_at"] = None
    else:
        record["blocked_by"] = None
        record["recheck_at"] = None
        record["recheck_consumed_at"] = None


def wait_facts(home: Home, active_task_ids: list[str]) -> dict[str, Any]:
    """The runtime facts a recorded wait is checked against: the tasks still running and the
    external trigger's delivery count (None without an active, readable trigger)."""
    from holon.agent import triggers  # the trigger module is off the light path until needed

    try:
        found = triggers.show(home) or {}
    except HolonError:  # a corrupt descriptor is doctor's finding; it delivers nothing
        found = {}
    count = found.get("trigger_count") if found.get("status") == "active" else None
    return {"active_task_ids": list(active_task_ids), "trigger_count": count}


def active_wait(record: dict[str, Any], facts: dict[str, Any] | None = None) -> str | None:
    """The WorkItem-scoped wait still in force: `task` while a task the item's turn ended on
    still runs, `external` until the external trigger delivers again (its count moves on, or it
    is revoked). Without `facts`, the wait as recorded."""
    wait = record.get("wait") or {}
    kind = wait.get("kind")
    if kind not in ("task", "external") or facts is None:
        return kind if kind in ("task", "external") else None
    if kind == "task":
        return "task" if set(wait.get("task_ids") or ()) & set(facts["active_task_ids"]) else None
    return "external" if facts.get("trigger_count") == wait.get("trigger_count") else None


def scheduling_state(record: dict[str, Any], facts: dict[str, Any] | None = None) -> str:
    """The spec's WorkItemSchedulingState: runnable, waiting_operator, waiting_task,
    waiting_external, blocked or completed."""
    if record.get("state") == "completed":
        return "completed"
    if record.get("plan_status") == "needs_input":
        return "waiting_operator"
    wait = active_wait(record, facts)
    if wait:
        return f"waiting_{wait}"
    if record.get("blocked_by"):
        return "blocked"
    return "runnable"


def readiness(
    record: dict[str, Any], current_id: str | None, facts: dict[str, Any] | None = None
) -> str:
    """The shared readiness projection of one item (current items are labelled `current`); an
    active task or external wait projects as blocked."""
    sched = scheduling_state(record, facts)
    if sched == "completed":
        return "completed"
    if record["id"] == current_id:
        return "current"
    if sched == "waiting_operator":
        return "waiting_for_operator"
    if sched == "blocked" and record.get("recheck_consumed_at"):
        return "triggered_blocked"
    return "queued_runnable" if sched == "runnable" else "blocked"


def delivery_summaries(home: Home) -> dict[str, dict[str, Any]]:
    """Newest DeliverySummaryRecord per work item."""
    out: dict[str, dict[str, Any]] = {}
    for rec in jsonl.read(home.delivery_summaries):
        if rec.get("work_item_id"):
            out[rec["work_item_id"]] = rec
    return out


def record_delivery_summary(
    agent: Agent, work_item_id: str, text: str, *, turn_id: str, message_id: str | None
) -> dict[str, Any]:
    rec = {
        "schema_version": SCHEMA_VERSION,
        "id": new_id("dsum"),
        "agent_id": agent.id,
        "work_item_id": work_item_id,
        "text": text,
        "turn_id": turn_id,
        "message_id": message_id,
        "created_at": clock.now_iso(),
    }
    with agent.state_lock():
        jsonl.append(agent.home.delivery_summaries, rec)
    return rec


def view(
    home: Home,
    record: dict[str, Any],
    current_id: str | None,
    summaries: dict[str, dict[str, Any]] | None = None,
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The read-surface shape: the record without inline plan, plus plan_artifact and derived
    views."""
    out = {k: v for k, v in record.items() if k not in ("plan", "schema_version")}
    out["readiness"] = readiness(record, current_id, facts)
    out["scheduling_state"] = scheduling_state(record, facts)
    out["plan_artifact"] = plan_artifact(home, record["id"])
    if record.get("state") == "completed":
        summary = (summaries if summaries is not None else delivery_summaries(home)).get(
            record["id"]
        )
        out["completion_report"] = summary["text"] if summary else record.get("result_summary")
    return out


def due_rechecks(home: Home, now_ts: float) -> list[dict[str, Any]]:
    return [r for r in load_all(home).values() if (recheck_ts(r) or math.inf) <= now_ts]


def next_recheck(home: Home) -> float | None:
    times = [t for t in map(recheck_ts, load_all(home).values()) if t is not None]
    return min(times) if times else None

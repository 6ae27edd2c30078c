"""A private child's end: its final brief rejoins the parent, then the child is archived.

A child has ended when its last turn settled with a terminal closure (`completed` or
`failed`) and nothing is left: no message queued or in progress besides the one just settled,
no turn in flight, no task of its own running. Then, in this order:
    1. the parent's supervision task is finished (holon.tasks.results.finish: the terminal
       record, then exactly one task_result in the parent's queue) with the child's last brief
       as its output;
    2. the child is archived: stopped, `archived_at` in its agent.json, moved to the registry's
       archived entries (no tick runs it again; its ledgers stay), its worktree removed when
       clean (kept, with an event, when it holds changes).
The child's tick does this right after the settle, before its message file is done
(`after_settle`): a tick killed before the end is complete leaves that file in queue/cur/, so
the child's next tick runs this again, and both steps are idempotent. The parent's busy tick
repairs the same from its side (`reconcile`). A child whose supervision task is missing or
already terminal converges to archived. TaskStop ends a child the same way, `cancelled`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon import clock
from holon.agent import control
from holon.agent.handle import Agent
from holon.home import registry
from holon.home.layout import Home, is_home
from holon.model.records import AgentStatus
from holon.store import crashpoint, jsonl
from holon.store.locks import FileLock, LockBusy
from holon.tasks import results, store, tracking
from holon.tasks.child import children, childview, childws
from holon.text import head_tail


def ended(child: Agent, current: str | None = None) -> str | None:
    """'completed' or 'failed' when the child has ended (module docstring), else None.
    `current`: the queue file of the message whose turn just settled (not yet done)."""
    state = child.state()
    if state.inflight or state.status == AgentStatus.awake_running:
        return None
    queue = child.home.queue
    if queue.has_pending() or [n for n in queue.in_progress() if n != current]:
        return None
    if tracking.live(child.home, list(state.active_task_ids)):
        return None
    outcome = (state.closure or {}).get("outcome")
    return outcome if outcome in ("completed", "failed") else None


def last_brief(child_home: Home) -> dict[str, Any] | None:
    found = jsonl.tail(child_home.briefs, 1)
    return found[-1] if found else None


def finish(parent: Agent, record: dict[str, Any], status: str, **why: Any) -> dict[str, Any]:
    """Step 1: the supervision task's terminal record and task_result (idempotent). The child's
    tick, the parent's reconcile and TaskStop may all get here: one at a time, under the task's
    `finish.lock`, each re-reading the record, so the result is admitted once."""
    lock = FileLock(parent.home.task_dir(record["id"]) / "finish.lock")
    with lock:
        record.update(store.load(parent.home, record["id"]) or {})
        return _finish(parent, record, status, **why)


def _finish(parent: Agent, record: dict[str, Any], status: str, **why: Any) -> dict[str, Any]:
    if record["status"] in store.TERMINAL and record.get("result_message_id"):
        return record
    if record["status"] not in store.TERMINAL:
        child_home = Home(record["child_home"], record["child_agent_id"])
        brief = last_brief(child_home) if is_home(child_home.root) else None
        text = (brief or {}).get("text") or ""
        record["output_summary"], record["output_summary_truncated"] = head_tail(
            text, results.RESULT_PREVIEW_CHARS
        )
        record["child_supervision"] = childview.projection(record, status=status)
        failure = None
        if status == "failed":
            failure = {
                "kind": why.get("kind", "child_failed"),
                "task_id": record["id"],
                "message": why.get("message") or text or "the child agent's last turn failed",
                "child_agent_id": record["child_agent_id"],
            }
        crashpoint.step("child.finish")
        return results.finish(parent, record, status, failure=failure)
    # terminal, its result not recorded: admitted already (killed before the record said so)?
    record["result_message_id"] = children.admitted(parent, record["id"])
    return results.finish(parent, record, record["status"])


def archive(parent: Agent | None, record: dict[str, Any] | None, agent: Agent) -> None:
    """Step 2 (idempotent): stop, mark archived, leave the live registry, clean the worktree."""
    child = agent.home
    if not is_home(child.root):
        return
    if agent.state().status != AgentStatus.stopped:
        control.stop(child)
    ident = children.child_identity(child)
    if not ident.get("archived_at"):
        crashpoint.step("child.archive")
        children.write_identity(child, archived_at=clock.now_iso())
    if child.agent_id in registry.load() or child.agent_id not in registry.archived():
        registry.archive(child.agent_id, child.root)
    if parent is not None and record is not None and record.get("worktree"):
        outcome = childws.drop_worktree(parent, record)
        if outcome is not None:
            store.save(parent.home, record)
    agent.event("agent_archived", task_id=(record or {}).get("id"))


def supervision_record(child: Home) -> tuple[Agent | None, dict[str, Any] | None]:
    """(the parent, the child's supervision record in its home) — None for what is gone."""
    home = children.parent_of(child)
    if home is None:
        return None, None
    parent = Agent(home)
    for rec in [store.load(home, t) for t in parent.state().active_task_ids] or []:
        if children.is_child_task(rec) and rec["child_agent_id"] == child.agent_id:  # type: ignore[index]
            return parent, rec
    for rec in reversed(children.child_records(home)):
        if rec.get("child_agent_id") == child.agent_id:
            return parent, rec
    return parent, None


def after_settle(agent: Agent, current: str | None = None) -> None:
    """The child's side, run by its tick under its turn lock after each settled turn."""
    ident = agent.identity()
    if ident.get("kind") != "child" or not ident.get("lineage_parent_agent_id"):
        return
    if ident.get("archived_at") and agent.id not in registry.load():
        return  # archived all through
    parent, record = supervision_record(agent.home)
    if parent is None or record is None or record["status"] in store.TERMINAL:
        if parent is not None and record is not None and not record.get("result_message_id"):
            finish(parent, record, record["status"])
        archive(parent, record, agent)
        return
    outcome = ended(agent, current)
    if outcome is None:
        return
    finish(parent, record, outcome)
    archive(parent, record, agent)


def reconcile(parent: Agent) -> list[str]:
    """The parent's side, at its busy tick: resume or roll back spawns a dead process left, and
    finish the tasks of children that ended while nobody finished them. Returns the task ids."""
    done = []
    for task_id in list(parent.state().active_task_ids):
        record = store.load(parent.home, task_id)
        if not children.is_child_task(record) or record["status"] in store.TERMINAL:  # type: ignore[index]
            continue
        assert record is not None
        if record.get("phase") != "running":
            if children.resume_or_roll_back(parent, record) != "in_progress":
                done.append(task_id)
            continue
        child_home = Home(record["child_home"], record["child_agent_id"])
        if not is_home(child_home.root):
            finish(
                parent,
                record,
                "failed",
                kind="child_missing",
                message=(f"the child agent's home {child_home.root} is gone"),
            )
            done.append(task_id)
            continue
        if _finish_idle_child(parent, record, child_home):
            done.append(task_id)
    return done


def _finish_idle_child(parent: Agent, record: dict[str, Any], child_home: Home) -> bool:
    lock = FileLock(child_home.turn_lock)
    try:
        child_home.locks.mkdir(parents=True, exist_ok=True)
        lock.acquire(blocking=False)
    except LockBusy:
        return False  # its tick is running: it finishes the task itself
    try:
        child = Agent(child_home)
        archived = bool(child.identity().get("archived_at"))
        outcome = "cancelled" if archived else ended(child)
        if outcome is None:
            return False
        finish(parent, record, outcome)
        archive(parent, record, child)
        return True
    finally:
        lock.release()


def stop(parent: Agent, record: dict[str, Any]) -> dict[str, Any]:
    """TaskStop on a child: stop it, finish the task `cancelled`, archive it."""
    child_home = Home(record["child_home"], record["child_agent_id"])
    if record["status"] in store.TERMINAL:
        return record
    if is_home(child_home.root):
        control.stop(child_home)
    record["stop_requested"] = True
    store.save(parent.home, record)
    record = finish(parent, record, "cancelled")
    archive(parent, record, Agent(child_home))
    return record


def child_path(record: dict[str, Any]) -> Path:
    return Path(record["child_home"])

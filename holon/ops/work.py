"""Operator-side work-item operations: list, show, and the control-plane enqueue."""

from __future__ import annotations

from typing import Any

from holon.agent import nextdue, workitems
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home import stateview
from holon.home.layout import Home


def _focus(home: Home) -> tuple[str | None, dict[str, Any]]:
    """The current item's id and the facts its waits are checked against: from the stored state
    without pydantic when it is current (holon.home.stateview), else the full read."""
    view = stateview.current(home)
    if view is not None:
        current, tasks = view["current_work_item_id"], view["active_task_ids"]
    else:
        state = Agent(home).state()
        current, tasks = state.current_work_item_id, state.active_task_ids
    return current, workitems.wait_facts(home, tasks)


def listing(home: Home, include_completed: bool = False) -> list[dict[str, Any]]:
    current, facts = _focus(home)
    summaries = workitems.delivery_summaries(home)
    return [
        workitems.view(home, r, current, summaries, facts)
        for r in workitems.load_all(home).values()
        if include_completed or r.get("state") != "completed"
    ]


def show(home: Home, work_item_id: str) -> dict[str, Any]:
    rec = workitems.get(home, work_item_id)
    if rec is None:
        raise UsageError(
            f"no work item {work_item_id!r} for {home.agent_id}",
            kind="unknown_work_item",
            hint=f"see `holon work list {home.agent_id} --all`",
        )
    current, facts = _focus(home)
    return workitems.view(home, rec, current, facts=facts)


def create(home: Home, objective: str, plan: str | None = None) -> dict[str, Any]:
    """Control-plane enqueue: a queued item in the same store; no message, no focus change."""
    if not objective.strip():
        raise UsageError(
            "objective is empty", kind="invalid_objective", hint="describe what done looks like"
        )
    agent = Agent(home)
    rec = workitems.new_record(agent.id, objective.strip())
    if plan:
        workitems.write_plan(home, rec["id"], plan)
    rec = workitems.append(agent, rec)
    agent.event(
        "work_item_enqueued",
        work_item_id=rec["id"],
        objective=rec["objective"],
        via="control_plane",
    )
    _idle_activation(agent)
    return workitems.view(home, rec, agent.state().current_work_item_id)


def close(home: Home, work_item_id: str, note: str | None, cancel: bool) -> dict[str, Any]:
    """The operator ends a work item: done (`close`) or abandoned (`cancel`). It leaves the
    agent's focus and the listing; the note becomes its report."""
    rec = workitems.get(home, work_item_id)
    if rec is None:
        show(home, work_item_id)  # the unknown_work_item error
    assert rec is not None
    if rec.get("state") == "completed":
        raise UsageError(
            f"work item {work_item_id} is already closed",
            kind="work_item_closed",
            hint=f"`holon work show {home.agent_id} {work_item_id}` shows its report",
        )
    how = "cancelled" if cancel else "closed"
    report = f"{how} by the operator" + (f": {note.strip()}" if note and note.strip() else "")
    agent = Agent(home)
    agent.event(f"work_item_{'cancelled' if cancel else 'completed'}", work_item_id=work_item_id,
                via="operator", report=bool(note))  # fmt: skip
    rec = workitems.append(
        agent,
        {**rec, "state": "completed", "blocked_by": None, "recheck_at": None,
         "recheck_consumed_at": None, "result_summary": report},
    )  # fmt: skip
    agent.update_state(
        lambda s: (
            setattr(s, "current_work_item_id", None)
            if s.current_work_item_id == work_item_id
            else None
        )
    )
    return workitems.view(home, rec, agent.state().current_work_item_id)


def _idle_activation(agent: Agent) -> None:
    """An idle agent with no current item gets a work signal so the next tick lets it pick the new
    item."""

    def apply(s: Any) -> None:
        if s.status.value != "awake_idle" or s.current_work_item_id or s.inflight:
            return
        closure = dict(s.closure or {})
        if closure.get("outcome") in ("completed", None) or closure.get("activation_message_id"):
            first = next(
                (
                    r
                    for r in workitems.load_all(agent.home).values()
                    if workitems.readiness(r, None) == "queued_runnable"
                ),
                None,
            )
            if first:
                closure.pop("activation_message_id", None)
                closure.update(
                    outcome="continuable",
                    work_signal={
                        "work_item_id": first["id"],
                        "status": "queued",
                        "reactivation_mode": "activate_queued",
                    },
                )
                s.closure = closure

    agent.update_state(apply)
    nextdue.refresh(agent.home)

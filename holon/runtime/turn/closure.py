"""Closure and posture after a turn, and the continuation view before the next one.

ClosureDecision (state.closure): completed / continuable (work_signal) /
waiting (waiting_reason) / failed, plus the runtime posture (awake, asleep,
paused, stopped). ContinuationResolution (state.last_continuation): derived from
the closure that existed before a dequeued message became the active run;
decides whether that message is model-visible or only a liveness wake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from holon import clock
from holon.agent import workitems
from holon.agent.handle import Agent
from holon.model.dicts import Closure, Continuation, WorkSignal
from holon.model.messages import MessageEnvelope
from holon.model.records import AgentState, AgentStatus
from holon.runtime.turn.state import TurnState
from holon.tasks import tracking
from holon.tools.base import ToolEffects

# trigger kind of a message -> the waiting reason it answers
_ANSWERS = {
    "operator_input": "awaiting_operator_input",
    "task_result": "awaiting_task_result",
    "timer_fire": "awaiting_timer",
}
# a current item's active wait -> the closure's waiting reason
WAITING = {
    "waiting_operator": "awaiting_operator_input",
    "waiting_task": "awaiting_task_result",
    "waiting_external": "awaiting_external_change",
}


@dataclass
class TurnOutcome:
    """What a settled turn leaves behind: the tools' effects and the work queue's closure
    signals."""

    effects: ToolEffects = field(default_factory=ToolEffects)
    waiting_reason: str | None = None
    work_signal: WorkSignal | None = None
    work_item_id: str | None = None  # the work item the brief binds to

    def brief_text(self, final_text: str) -> str:
        """A completed work item's report is the brief; otherwise the turn's final text."""
        return self.effects.completion.report if self.effects.completion else final_text

    @property
    def visibility(self) -> str:
        """The brief's operator visibility (spec, Brief Output Contract): a completed work item is
        work_done; a turn that leaves the agent waiting on its operator is action_required."""
        if self.effects.completion:
            return "work_done"
        if self.waiting_reason == "awaiting_operator_input":
            return "action_required"
        return "turn_result"


def tool_effects(ts: TurnState) -> ToolEffects:
    """The effects of the turn's successful calls, in call order (a later call's field wins)."""
    merged = ToolEffects()
    for data in ts.results.values():
        if data.get("status") == "success" and data.get("effects"):
            merged = merged.merged(ToolEffects.model_validate(data["effects"]))
    return merged


def turn_outcome(agent: Agent, ts: TurnState) -> TurnOutcome:
    """Effects plus closure signals, after committing the bound item's wait (idempotent on
    resume)."""
    out = TurnOutcome(effects=tool_effects(ts))
    state = agent.state()
    bound = state.bound_work_item_id  # else the item the turn picked: the one its brief binds to
    item = workitems.get(agent.home, bound or state.current_work_item_id or "")
    _commit_bound(agent, item, out.effects, state)
    out.waiting_reason, out.work_signal = _signals(agent, out.effects)
    completion = out.effects.completion
    out.work_item_id = (
        completion.work_item_id if completion else (bound or state.current_work_item_id)
    )
    return out


def _signals(agent: Agent, effects: ToolEffects) -> tuple[str | None, WorkSignal | None]:
    """(waiting_reason, work_signal) for the settled turn."""
    state = agent.state()
    awaited = tracking.awaited(agent.home, state.active_task_ids)  # not a child's supervision
    items = workitems.load_all(agent.home)
    facts = workitems.wait_facts(agent.home, state.active_task_ids)
    current = items.get(state.current_work_item_id or "")
    sleeping = effects.sleep is not None
    if current and current.get("state") == "open":
        sched = workitems.scheduling_state(current, facts)
        if sched in WAITING:
            return WAITING[sched], None
        if sched == "blocked":
            return ("awaiting_task_result" if awaited else "awaiting_external_change"), None
        if not sleeping:
            return None, {
                "work_item_id": current["id"],
                "status": "active",
                "reactivation_mode": "continue_active",
            }
    elif not sleeping:
        queued = [
            r
            for r in items.values()
            if workitems.readiness(r, state.current_work_item_id, facts) == "queued_runnable"
        ]
        if queued:
            return None, {
                "work_item_id": queued[0]["id"],
                "status": "queued",
                "reactivation_mode": "activate_queued",
            }
    if effects.sleep is not None and effects.sleep.until:
        return "awaiting_timer", None
    if awaited:
        return "awaiting_task_result", None
    return None, None


def _commit_bound(
    agent: Agent, bound: dict[str, Any] | None, effects: ToolEffects, state: AgentState
) -> None:
    """Record on the bound open item the wait its turn ended on (spec, Work-Item Persistence
    Foundation: active task and external waits): the tasks it rests on (any, a child's
    included, when the turn slept; else those it awaits), or, resting with no task and no
    timer, the active external trigger's next delivery. A turn that ends on neither clears it.
    Idempotent on resume: an unchanged wait is not written again."""
    if not bound or bound.get("state") != "open":
        return
    wait = _wait_of(agent, effects, state)
    if wait == bound.get("wait"):
        return
    workitems.append(agent, {**bound, "wait": wait})
    agent.event("work_item_wait_committed", work_item_id=bound["id"], wait=wait)


def _wait_of(agent: Agent, effects: ToolEffects, state: AgentState) -> dict[str, Any] | None:
    sleeping = effects.sleep is not None
    tasks = (
        list(state.active_task_ids)
        if sleeping
        else tracking.awaited(agent.home, state.active_task_ids)
    )
    if tasks:
        return {"kind": "task", "task_ids": tasks}
    if sleeping and not effects.sleep.until:
        count = workitems.wait_facts(agent.home, [])["trigger_count"]
        if count is not None:
            return {"kind": "external", "trigger_count": count}
    return None


def apply_closure(state: AgentState, ts: TurnState, outcome: str, turn: TurnOutcome | None) -> None:
    """Derive and persist the ClosureDecision and the runtime posture for the settled turn."""
    closure: Closure = {
        "turn_id": ts.turn_id,
        "message_id": ts.message.id,
        "terminal_observed": True,
        "decided_at": clock.now_iso(),
    }
    turn = turn or TurnOutcome()
    if outcome == "failed":
        closure["outcome"] = "failed"
    elif turn.waiting_reason:
        closure["outcome"] = "waiting"
        closure["waiting_reason"] = turn.waiting_reason
    elif turn.work_signal:
        closure["outcome"] = "continuable"
        closure["work_signal"] = turn.work_signal
    else:
        closure["outcome"] = "completed"
    if state.status in (AgentStatus.paused, AgentStatus.stopped):
        posture = state.status.value
    elif turn.effects.sleep is not None:
        state.status = AgentStatus.asleep
        state.sleeping_until = turn.effects.sleep.until
        posture = "asleep"
    else:
        state.status = AgentStatus.awake_idle
        state.sleeping_until = None
        posture = "awake"
    closure["runtime_posture"] = posture
    if ts.model_ref:  # the work this turn leaves (rechecks, keep-working) runs with its model
        closure["model_ref"] = ts.model_ref
    state.closure = closure


def resolve_continuation(prior: dict[str, Any] | None, message: MessageEnvelope) -> Continuation:
    """ContinuationResolution for `message` against the closure snapshot that preceded it."""
    prior = prior or {}
    outcome = prior.get("outcome") or "completed"
    waiting = prior.get("waiting_reason") if outcome == "waiting" else None
    trigger = message.trigger_kind
    origin = message.origin.kind
    body = message.body
    liveness = (
        body.type == "json"
        and isinstance(body.value, dict)
        and body.value.get("liveness_only") is True
    )
    answers = _ANSWERS.get(trigger or "")
    if trigger == "system_tick" and origin == "callback":
        answers = "awaiting_external_change"
    matched = waiting is not None and answers == waiting
    evidence = [
        f"trigger:{trigger}",
        f"origin:{origin}",
        f"prior:{outcome}" + (f"/{waiting}" if waiting else ""),
    ]
    if trigger == "task_status":
        visible, mode = False, "observational"
    elif liveness:
        visible = matched or outcome == "continuable"
        mode = (
            "resume_expected_wait"
            if matched
            else ("local_continuation" if visible else "liveness_only")
        )
        evidence.append("plain_wake_hint")
    else:
        visible = True
        mode = "resume_expected_wait" if matched else "local_continuation"
    out: Continuation = {
        "message_id": message.id,
        "model_visible": visible,
        "mode": mode,
        "prior_closure_outcome": outcome,
        "matched_waiting_reason": matched,
        "evidence": evidence,
        "resolved_at": clock.now_iso(),
    }
    if waiting:
        out["prior_waiting_reason"] = waiting
    return out

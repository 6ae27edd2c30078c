"""Closure and posture after a turn, and the continuation view before the next one.

ClosureDecision (state.closure): completed / continuable (work_signal) /
waiting (waiting_reason) / failed, plus the runtime posture (awake, asleep,
paused, stopped). ContinuationResolution (state.last_continuation): derived from
the closure that existed before a dequeued message became the active run;
decides whether that message is model-visible or only a liveness wake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from holon import clock
from holon.model.records import AgentStatus

if TYPE_CHECKING:
    from holon.agent.handle import Agent
    from holon.runtime.turn.loop import TurnState

# trigger kind of a message -> the waiting reason it answers
_ANSWERS = {"operator_input": "awaiting_operator_input", "task_result": "awaiting_task_result",
            "timer_fire": "awaiting_timer"}


def turn_effects(agent: "Agent", ts: "TurnState") -> dict[str, Any]:
    """Effects the turn's successful tool calls asked of the runtime, plus the work-queue closure signals."""
    from holon.runtime import workqueue

    effects: dict[str, Any] = {}
    for data in ts.results.values():
        env = data.get("envelope") or {}
        if env.get("status") != "success":
            continue
        result = env.get("result") or {}
        runtime_effect = result.get("runtime_effect") if isinstance(result, dict) else None
        if isinstance(runtime_effect, dict):
            effects.update(runtime_effect)
    bound = getattr(agent.state(), "bound_work_item_id", None)
    effects.update(workqueue.closure_signals(agent, effects, bound))
    current = agent.state().current_work_item_id
    if not effects.get("work_item_id") and (bound or current):
        effects["work_item_id"] = bound or current  # the brief binds to the item this turn advanced
    return effects


def apply_closure(state: Any, ts: "TurnState", outcome: str, effects: dict[str, Any]) -> None:
    """Derive and persist the ClosureDecision and the runtime posture for the settled turn."""
    closure: dict[str, Any] = {"turn_id": ts.turn_id, "message_id": ts.message["id"],
                               "terminal_observed": True, "decided_at": clock.now_iso()}
    if outcome == "failed":
        closure["outcome"] = "failed"
    elif effects.get("waiting_reason"):
        closure["outcome"] = "waiting"
        closure["waiting_reason"] = effects["waiting_reason"]
    elif effects.get("work_signal"):
        closure["outcome"] = "continuable"
        closure["work_signal"] = effects["work_signal"]
    else:
        closure["outcome"] = "completed"
    if state.status in (AgentStatus.paused, AgentStatus.stopped):
        posture = state.status.value
    elif effects.get("sleep") is not None:
        state.status = AgentStatus.asleep
        state.sleeping_until = effects["sleep"].get("until")
        posture = "asleep"
    else:
        state.status = AgentStatus.awake_idle
        state.sleeping_until = None
        posture = "awake"
    closure["runtime_posture"] = posture
    state.closure = closure


def resolve_continuation(prior: dict[str, Any] | None, message: dict[str, Any]) -> dict[str, Any]:
    """ContinuationResolution for `message` against the closure snapshot that preceded it."""
    prior = prior or {}
    outcome = prior.get("outcome") or "completed"
    waiting = prior.get("waiting_reason") if outcome == "waiting" else None
    trigger = message.get("trigger_kind")
    origin = (message.get("origin") or {}).get("kind")
    body = message.get("body") or {}
    liveness = body.get("type") == "json" and (body.get("value") or {}).get("liveness_only") is True
    answers = _ANSWERS.get(trigger)
    if trigger == "system_tick" and origin == "callback":
        answers = "awaiting_external_change"
    matched = waiting is not None and answers == waiting
    evidence = [f"trigger:{trigger}", f"origin:{origin}", f"prior:{outcome}" + (f"/{waiting}" if waiting else "")]
    if trigger == "task_status":
        visible, mode = False, "observational"
    elif liveness:
        visible = matched or outcome == "continuable"
        mode = "resume_expected_wait" if matched else ("local_continuation" if visible else "liveness_only")
        evidence.append("plain_wake_hint")
    else:
        visible = True
        mode = "resume_expected_wait" if matched else "local_continuation"
    out: dict[str, Any] = {"message_id": message.get("id"), "model_visible": visible, "mode": mode,
                           "prior_closure_outcome": outcome, "matched_waiting_reason": matched,
                           "evidence": evidence, "resolved_at": clock.now_iso()}
    if waiting:
        out["prior_waiting_reason"] = waiting
    return out

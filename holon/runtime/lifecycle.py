"""Closure and posture after a turn: completed / continuable / waiting / failed, awake or asleep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from holon.model.records import AgentStatus

if TYPE_CHECKING:
    from holon.runtime.agent import Agent
    from holon.runtime.turn import TurnState


def turn_effects(agent: "Agent", ts: "TurnState") -> dict[str, Any]:
    """Effects the turn's successful tool calls asked of the runtime (sleep, completion reports ...)."""
    effects: dict[str, Any] = {}
    for data in ts.results.values():
        env = data.get("envelope") or {}
        if env.get("status") != "success":
            continue
        result = env.get("result") or {}
        runtime_effect = result.get("runtime_effect") if isinstance(result, dict) else None
        if isinstance(runtime_effect, dict):
            effects.update(runtime_effect)
    return effects


def apply_closure(state: Any, ts: "TurnState", outcome: str, effects: dict[str, Any]) -> None:
    """Derive and persist the ClosureDecision and the runtime posture for the settled turn."""
    closure: dict[str, Any] = {"turn_id": ts.turn_id, "message_id": ts.message["id"]}
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
    elif effects.get("sleep"):
        state.status = AgentStatus.asleep
        state.sleeping_until = effects["sleep"].get("until")
        posture = "asleep"
    else:
        state.status = AgentStatus.awake_idle
        state.sleeping_until = None
        posture = "awake"
    closure["runtime_posture"] = posture
    state.closure = closure

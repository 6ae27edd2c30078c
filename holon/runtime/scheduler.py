"""Due work that becomes queue messages at the start of a tick: timers, wake
hints, rechecks, activation.

Runs under the turn lock. Nothing here refreshes `next_due`: the tick does that
once at its end (and after each turn), see holon.runtime.tick.
"""

from __future__ import annotations

from typing import Any

from holon import clock
from holon.agent import admission, wakehints, workitems
from holon.agent.handle import Agent
from holon.runtime import timer_fire


def fire_due(agent: Agent, *, activate: bool = True) -> list[str]:
    """Turn everything that has fallen due into queued messages; returns what fired.

    Wake hints go before work-queue activation so keep-working ticks never starve them.
    """
    if agent.state().status.value in ("paused", "stopped"):
        return []
    fired = timer_fire.fire_due(agent)
    fired += wakehints.convert(agent)
    fired += _rechecks(agent)
    if activate and not agent.home.queue.has_pending():
        fired += _activate(agent)
    return fired


def _rechecks(agent: Agent) -> list[str]:
    """A blocked work item whose recheck time has come gets one reminder (the item itself is
    unchanged)."""
    out = []
    for rec in workitems.due_rechecks(agent.home, clock.now_ts()):
        text = (
            f"Recheck reminder for work item {rec['id']} ({rec['objective']}): it is blocked by "
            f'"{rec["blocked_by"]}" since before {rec["recheck_at"]}. Inspect the blocker; update '
            "or clear blocked_by with UpdateWorkItem. This reminder does not change the item."
        )
        env = admission.admit(
            agent.home,
            "runtime",
            "system_tick",
            admission.text_body(text),
            source="work_item_recheck",
            priority="background",
            work_item_id=rec["id"],
            metadata={"reason": "work_item_recheck"},
            model_ref=_carried_model(agent),
        )
        workitems.append(agent, {**rec, "recheck_consumed_at": clock.now_iso()})
        out.append(env["id"])
    return out


def _carried_model(agent: Agent) -> str | None:
    """The model the last settled turn was chosen to run with: the work it left behind (rechecks,
    keep-working) runs with it too."""
    return (agent.state().closure or {}).get("model_ref")


def _activate(agent: Agent) -> list[str]:
    """A continuable closure (work left on a runnable item) becomes one keep-working message."""
    state = agent.state()
    closure = state.closure or {}
    signal = closure.get("work_signal")
    if (
        state.status.value != "awake_idle"
        or closure.get("outcome") != "continuable"
        or not signal
        or closure.get("activation_message_id")
    ):
        return []
    rec = workitems.get(agent.home, signal["work_item_id"])
    if rec is None or workitems.scheduling_state(rec) != "runnable":
        return []
    if signal["reactivation_mode"] == "continue_active":
        text = f"Continue work item {rec['id']}: {rec['objective']}"
    else:
        text = (
            "Runnable work items are queued and none is current; pick one with PickWorkItem and "
            "continue."
        )
    env = admission.admit(
        agent.home,
        "runtime",
        "system_tick",
        admission.text_body(text),
        source="work_queue",
        work_item_id=rec["id"],
        metadata={"reason": signal["reactivation_mode"]},
        model_ref=closure.get("model_ref"),
    )

    def consumed(s: Any) -> None:
        if s.closure:
            s.closure = {**s.closure, "activation_message_id": env["id"]}

    agent.update_state(consumed)
    return [env["id"]]

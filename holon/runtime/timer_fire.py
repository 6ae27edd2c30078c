"""Firing due timers: guard, one `timer_tick` per timer (missed occurrences listed), reschedule."""

from __future__ import annotations

import os
from typing import Any

from holon import clock, config
from holon.agent import admission, timers
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.runtime.turn.context import execution_root
from holon.tasks.command import command, spawn

MAX_LISTED_MISSED = 20
DEFAULT_GUARD_TIMEOUT_S = 10


def fire_due(agent: Agent) -> list[str]:
    """Fire every due timer of `agent`; returns the ids that fired."""
    return fire(agent, timers.ids(agent.home))


def fire(agent: Agent, timer_ids: list[str]) -> list[str]:
    now = clock.now_ts()
    fired: list[str] = []
    for timer_id in timer_ids:
        timer = timers.read_or_set_aside(agent.home, timer_id, agent.event)
        if timer is None or float(timer["due_ts"]) > now:
            continue
        occurrences = _due_occurrences(timer, now)
        if _queued(agent, timer["id"], occurrences[-1]):
            timer["fired_count"] = int(timer.get("fired_count", 0)) + 1  # fired, not rescheduled
        elif _guard_allows(agent, timer):
            _admit(agent, timer, occurrences)
            fired.append(timer["id"])
        following = timers.next_after(timer, occurrences[-1])
        if following is None:
            os.unlink(timers.path(agent.home, timer_id))
        else:
            timer.update(due_ts=following, due_at=clock.iso(following))
            timers.save(agent.home, timer)
    return fired


def _queued(agent: Agent, timer_id: str, planned: float) -> bool:
    """Whether this occurrence's timer_tick is already queued: a tick was killed after admitting
    it and before rescheduling the timer. A tick fires due timers before it claims a message, so
    such a message is still in the queue, and it is not admitted twice."""
    planned_at = clock.iso(planned)
    for record in agent.home.queue.peek_all():
        meta = record.get("metadata") or {}
        if meta.get("timer_id") == timer_id and meta.get("planned_at") == planned_at:
            return True
    return False


def _due_occurrences(timer: dict[str, Any], now: float) -> list[float]:
    """Every planned occurrence at or before `now`, oldest first (at least the due one)."""
    planned = [float(timer["due_ts"])]
    while len(planned) < 100_000:
        following = timers.next_after(timer, planned[-1])
        if following is None or following > now:
            break
        planned.append(following)
    return planned


def _guard_allows(agent: Agent, timer: dict[str, Any]) -> bool:
    guard = timer.get("guard")
    if not guard:
        return True
    timeout = config.env_int(
        "HOLON_TIMER_GUARD_TIMEOUT_S", "runtime.timer_guard_timeout_s", DEFAULT_GUARD_TIMEOUT_S
    )
    code = _run_guard(agent, guard, timeout)
    if code == 0:
        return True
    agent.event("timer_guard_declined", timer_id=timer["id"], guard=guard, exit_status=code)
    return False


def _run_guard(agent: Agent, guard: str, timeout: int) -> int | str:
    """The guard runs as the agent's commands do (command.run: its sandbox, its environment,
    stopped with everything it started when `timeout` passes)."""
    root, _ = execution_root(agent)
    home = agent.home
    spec = command.CommandSpec(
        guard, home.root, "/bin/sh", False, False, False, timeout * 1000, root
    )
    try:
        fin = command.run(agent, spec, promote=False)
    except HolonError as exc:
        return exc.kind  # sandbox_unavailable or invalid_sandbox_config: declined, and recorded
    except spawn.SpawnError:
        return "spawn_failed"
    if fin.exit_status is not None:
        return fin.exit_status
    return "timeout" if fin.duration_ms >= timeout * 1000 else -(fin.signal or 0)


def _admit(agent: Agent, timer: dict[str, Any], occurrences: list[float]) -> None:
    planned = occurrences[-1]
    missed = occurrences[:-1]
    lines = [f"Timer {timer['id']} fired (planned for {clock.iso(planned)})."]
    if timer.get("text"):
        lines.append(timer["text"])
    if missed:
        listed = ", ".join(clock.iso(t) for t in missed[:MAX_LISTED_MISSED])
        more = (
            f" and {len(missed) - MAX_LISTED_MISSED} more"
            if len(missed) > MAX_LISTED_MISSED
            else ""
        )
        lines.append(
            f"Missed {len(missed)} earlier occurrence(s) while no tick ran: {listed}{more}."
        )
    metadata = {
        "timer_id": timer["id"],
        "schedule": timer["schedule"],
        "planned_at": clock.iso(planned),
        "missed_count": len(missed),
        "missed_at": [clock.iso(t) for t in missed[:MAX_LISTED_MISSED]],
        "timer_source": timer.get("source"),
    }
    admission.admit(
        agent.home,
        "timer",
        "timer_tick",
        admission.text_body("\n".join(lines)),
        source=timer["id"],
        metadata=metadata,
        model_ref=timer.get("model_ref"),
    )
    timer["fired_count"] = int(timer.get("fired_count", 0)) + 1
    timer["last_fired_at"] = clock.now_iso()
    agent.event(
        "timer_fired", timer_id=timer["id"], planned_at=clock.iso(planned), missed_count=len(missed)
    )

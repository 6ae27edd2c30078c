"""Due work that becomes queue messages at the start of a tick: timers, rechecks, wake hints, activation."""

from __future__ import annotations

from holon.agent.handle import Agent


def fire_due(agent: Agent, *, activate: bool = True) -> list[str]:
    """Turn everything that has fallen due into queued messages; returns what fired.

    Wake hints go before work-queue activation so keep-working ticks never starve them.
    """
    from holon.runtime import timers, workqueue
    from holon.agent import wakehints

    if agent.state().status.value in ("paused", "stopped"):
        return []
    fired = timers.fire_due(agent)
    fired += wakehints.convert(agent)
    fired += workqueue.fire_due(agent, activate=activate)
    return fired

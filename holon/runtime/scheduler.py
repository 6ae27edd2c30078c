"""Due work that becomes queue messages at the start of a tick: timers, rechecks, wake hints."""

from __future__ import annotations

from holon.runtime.agent import Agent


def fire_due(agent: Agent) -> list[str]:
    """Turn everything that has fallen due into queued messages; returns what fired."""
    from holon.runtime import timers, wakehints

    fired = timers.fire_due(agent)
    fired += wakehints.convert(agent)
    return fired

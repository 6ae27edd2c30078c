"""Timers are files in .holon/timers/; a due timer becomes a `timer_tick` message on the next tick."""

from __future__ import annotations

from holon.agent.handle import Agent


def fire_due(agent: Agent) -> list[str]:
    """Fire every due timer of `agent`; returns the ids that fired."""
    try:
        names = sorted(p.name for p in agent.home.timers.iterdir() if p.suffix == ".json")
    except FileNotFoundError:
        return []
    if not names:
        return []
    from holon.runtime import timer_fire

    return timer_fire.fire(agent, names)

"""Operator-side timers: create and cancel (then refresh next_due), list."""

from __future__ import annotations

from typing import Any

from holon.agent import nextdue, timers
from holon.agent.handle import Agent
from holon.home.layout import Home


def create(home: Home, **spec: Any) -> dict[str, Any]:
    """A new timer (see holon.agent.timers.build for `spec`). The next_due index is lowered
    before the timer file is written, so a crash between the two leaves it early, never late."""
    timer = timers.build(home, **spec)
    nextdue.lower(home, timer["due_ts"])
    timers.save(home, timer)
    nextdue.refresh(home)
    return timer


def cancel(home: Home, timer_id: str) -> dict[str, Any]:
    timer = timers.cancel(home, timer_id)
    nextdue.refresh(home)
    return timer


def listing(home: Home) -> list[dict[str, Any]]:
    """Every timer of `home`, soonest first; a corrupt timer file is set aside, with an event."""
    return timers.load(home, event=Agent(home).event)

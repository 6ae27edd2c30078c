"""Operator-side timers: create and cancel (then refresh next_due), list."""

from __future__ import annotations

from typing import Any

from holon.agent import nextdue, timers
from holon.home.layout import Home


def create(home: Home, **spec: Any) -> dict[str, Any]:
    """A new timer (see holon.agent.timers.create for `spec`)."""
    timer = timers.create(home, **spec)
    nextdue.refresh(home)
    return timer


def cancel(home: Home, timer_id: str) -> dict[str, Any]:
    timer = timers.cancel(home, timer_id)
    nextdue.refresh(home)
    return timer


def listing(home: Home) -> list[dict[str, Any]]:
    """Every timer of `home`, soonest first."""
    return timers.load(home)

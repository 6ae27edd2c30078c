"""`.holon/next_due`: the earliest moment a tick has runtime-owned work (epoch seconds as text).

That is a timer, a work-item recheck, the not-before of a deferred message or
a continuable closure.

Refreshed at the edges, never from inside the stores: after each turn (before
its message is done), at the end of a tick, and at the end of every operator
command that changes timers, work items, status or closure. So `holon tick --all`
finds due agents from one tiny file instead of reading state. A missing file
means nothing is scheduled. A crash between a change and the refresh leaves
either a queued message (which makes the next tick due, and that tick
refreshes) or an index that is early, never one that is late.
"""

from __future__ import annotations

import os

from holon import clock
from holon.agent import timers, workitems
from holon.home import settings
from holon.home.layout import Home
from holon.store.atomic import write_text


def compute(home: Home) -> float | None:
    """The earliest of: the next timer, the next work-item recheck, the not-before of a message
    deferred after a provider outage, and now when a continuable closure waits for activation."""
    candidates = [
        t
        for t in (
            timers.next_fire(home),
            workitems.next_recheck(home),
            home.queue.next_not_before(),
        )
        if t is not None
    ]
    state = settings.lenient(home)
    closure = state.get("closure") or {}
    if (
        closure.get("outcome") == "continuable"
        and state.get("status") == "awake_idle"
        and not closure.get("activation_message_id")
    ):
        candidates.append(clock.now_ts())
    return min(candidates) if candidates else None


def refresh(home: Home) -> float | None:
    due = compute(home)
    if due is None:
        try:
            os.unlink(home.next_due)
        except FileNotFoundError:
            pass
        return None
    text = f"{due:.3f}\n"
    try:
        if home.next_due.read_text() == text:
            return due
    except FileNotFoundError:
        pass
    write_text(home.next_due, text)
    return due


def read(home: Home) -> float | None:
    try:
        return float(home.next_due.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None

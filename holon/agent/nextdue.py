"""`.holon/next_due`: the earliest moment a tick has runtime-owned work (epoch seconds as text).

That is a timer, a work-item recheck, the not-before of a deferred message or
a continuable closure.

Refreshed at the edges, never from inside the stores: after each turn (before
its message is done), at the end of a tick, and at the end of every operator
command that changes timers, work items, status or closure. So `holon tick --all`
finds due agents from one tiny file instead of reading state. A missing file
means nothing is scheduled.

The index may be early, never late:
- a change that makes work due sooner calls `lower` BEFORE it writes its file, so a crash
  between the change and the refresh leaves an early index (the tick it wakes refreshes it);
- `refresh` computes and writes under one lock (`locks/next_due.lock`), so a refresh that read
  the stores before another process's change cannot overwrite the index that change wrote.
"""

from __future__ import annotations

import math
import os

from holon import clock
from holon.agent import timers, workitems
from holon.home import dueindex, settings
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


def lower(home: Home, at: float) -> None:
    """Make the index no later than `at`: called before a change that makes work due at `at`."""
    with _locked(home):
        current = read(home)
        if current is None or at < current:
            _write(home, at)


def refresh(home: Home) -> float | None:
    with _locked(home):
        due = compute(home)
        _write(home, due)
        return due


def _locked(home: Home):
    from holon.store.locks import locked

    home.locks.mkdir(parents=True, exist_ok=True)
    return locked(home.locks / "next_due.lock")


def _write(home: Home, due: float | None) -> None:
    if due is None:
        try:
            os.unlink(home.next_due)
        except FileNotFoundError:
            pass
        return
    text = f"{due:.3f}\n"
    dueindex.mark(home.root, due)  # the host due index, before and after: early, never late
    try:
        if home.next_due.read_text() == text:
            return
    except (FileNotFoundError, ValueError):
        pass
    write_text(home.next_due, text)
    dueindex.mark(home.root, due)


def read(home: Home) -> float | None:
    """The indexed time; None when nothing is scheduled. An unreadable index reads as due now
    (early, never late): the tick it causes rewrites it."""
    try:
        due = float(home.next_due.read_bytes().strip())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return 0.0
    return due if math.isfinite(due) else 0.0

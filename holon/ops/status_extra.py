"""Parts of the status document owned by the lifecycle: work items, timers, trigger, wake hint, next due."""

from __future__ import annotations

from typing import Any

from holon.home.layout import Home


def extra(home: Home, state: Any) -> dict[str, Any]:
    from holon import clock
    from holon.agent import nextdue, timers as timer_store, triggers, workitems

    counts: dict[str, int] = {}
    for rec in workitems.load_all(home).values():
        label = workitems.readiness(rec, state.current_work_item_id)
        counts[label] = counts.get(label, 0) + 1
    due = nextdue.read(home)
    return {"work_items": counts,
            "timers": [{"id": t["id"], "schedule": t["schedule"], "due_at": t["due_at"]}
                       for t in timer_store.load(home)],
            "external_trigger": triggers.show(home),
            "pending_wake_hint": state.pending_wake_hint,
            "next_due_at": clock.iso(due) if due is not None else None}

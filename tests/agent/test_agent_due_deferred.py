"""The idle check and next_due see a deferred message's not-before in its file name: not due
before then, due from then on, and a message that may run now is due at once."""

from __future__ import annotations

import pytest
from scenario_helpers import T0, set_now

from holon.agent import due, nextdue


def test_a_deferred_message_is_due_at_its_time_and_not_before(agent, monkeypatch):
    set_now(monkeypatch, T0)
    agent.queue.put({"id": "m1"}, "normal")
    name, record = agent.queue.claim()
    agent.queue.defer(name, record, T0 + 30)
    assert due.due_reasons(agent) == []
    assert nextdue.refresh(agent) == pytest.approx(T0 + 30) and nextdue.read(agent) == T0 + 30
    set_now(monkeypatch, T0 + 29.9)
    assert due.due_reasons(agent) == []
    set_now(monkeypatch, T0 + 30)
    assert due.due_reasons(agent) == ["queued_messages", "timer_due"]


def test_a_ready_message_beside_a_deferred_one_is_due_now(agent, monkeypatch):
    set_now(monkeypatch, T0)
    agent.queue.put({"id": "m1"}, "interject")
    name, record = agent.queue.claim()
    agent.queue.defer(name, record, T0 + 3600)
    agent.queue.put({"id": "m2"}, "background")
    assert due.due_reasons(agent) == ["queued_messages"]
    assert nextdue.compute(agent) == T0 + 3600


def test_a_task_marker_whose_pid_is_not_its_supervisor_is_due_for_recovery(agent):
    """After a restore or a reboot a marker's pid may be alive but someone else's."""
    import os

    agent.tasks_active.mkdir(parents=True, exist_ok=True)
    (agent.tasks_active / "task_old").write_text(f"{os.getpid()}\n")  # alive, not a supervisor
    assert "task_recovery" in due.due_reasons(agent)

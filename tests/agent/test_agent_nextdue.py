"""holon.agent.nextdue: the earliest runtime-owned work, kept in `.holon/next_due`."""

from __future__ import annotations

import os

from holon.agent import nextdue, timers, workitems
from holon.agent.handle import Agent
from holon.model.records import AgentStatus

T0 = 1_800_000_000.0


def _blocked_item(home, recheck_ms: int) -> dict:
    a = Agent(home)
    rec = workitems.new_record(a.id, "wait for CI")
    workitems.set_blocker(rec, "ci running", recheck_ms)
    return workitems.append(a, rec)


def test_nothing_scheduled(agent):
    assert nextdue.compute(agent) is None
    assert nextdue.refresh(agent) is None
    assert not agent.next_due.exists()
    assert nextdue.read(agent) is None


def test_timer_recheck_and_minimum(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    timers.create(agent, after="10m", text="t")
    assert nextdue.compute(agent) == T0 + 600
    _blocked_item(agent, 120_000)
    assert nextdue.compute(agent) == T0 + 120
    timers.create(agent, after="30s")
    assert nextdue.compute(agent) == T0 + 30


def test_consumed_or_completed_rechecks_do_not_count(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    rec = _blocked_item(agent, 60_000)
    workitems.append(Agent(agent), {**rec, "recheck_consumed_at": "2027-01-15T08:01:00.000Z"})
    assert nextdue.compute(agent) is None
    workitems.append(Agent(agent), {**rec, "state": "completed"})
    assert nextdue.compute(agent) is None


def test_continuable_closure_is_due_now(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    a = Agent(agent)
    a.update_state(lambda s: setattr(s, "closure", {"outcome": "continuable"}))
    assert nextdue.compute(agent) == T0
    a.update_state(
        lambda s: setattr(
            s, "closure", {"outcome": "continuable", "activation_message_id": "msg_x"}
        )
    )
    assert nextdue.compute(agent) is None  # already activated by a queued message
    a.update_state(lambda s: setattr(s, "closure", {"outcome": "completed"}))
    assert nextdue.compute(agent) is None
    a.update_state(
        lambda s: (
            setattr(s, "closure", {"outcome": "continuable"}),
            setattr(s, "status", AgentStatus.asleep),
        )
    )
    assert nextdue.compute(agent) is None  # only while awake_idle


def test_refresh_writes_then_removes(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    timer = timers.create(agent, after="90s")
    assert nextdue.refresh(agent) == T0 + 90
    assert agent.next_due.read_text() == f"{T0 + 90:.3f}\n"
    assert nextdue.read(agent) == T0 + 90
    timers.cancel(agent, timer["id"])
    assert nextdue.refresh(agent) is None
    assert not agent.next_due.exists()
    assert nextdue.refresh(agent) is None  # removing twice is fine


def test_refresh_does_not_rewrite_an_unchanged_file(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    timers.create(agent, after="1h")
    nextdue.refresh(agent)
    before = os.stat(agent.next_due)
    nextdue.refresh(agent)
    after = os.stat(agent.next_due)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    timers.create(agent, after="1m")
    nextdue.refresh(agent)
    assert nextdue.read(agent) == T0 + 60


def test_an_unreadable_index_reads_as_due_now(agent):
    # early, never late: a tick that finds it due rewrites it
    for garbage in ("soon\n", "nan\n", "inf\n", "\x00\x01"):
        agent.next_due.write_text(garbage)
        assert nextdue.read(agent) == 0.0
    agent.next_due.write_text(" 12.5 \n")
    assert nextdue.read(agent) == 12.5


def test_due_reasons_use_the_file(agent, monkeypatch):
    from holon.agent.due import due_reasons

    monkeypatch.setenv("HOLON_NOW", str(T0))
    timers.create(agent, after="5m")
    nextdue.refresh(agent)
    assert due_reasons(agent) == []
    monkeypatch.setenv("HOLON_NOW", str(T0 + 300))
    assert due_reasons(agent) == ["timer_due"]

"""holon.runtime.timer_fire: due timers become timer_tick messages; guards; missed occurrences."""

from __future__ import annotations

from scenario_helpers import T0, set_now

from holon import clock
from holon.agent import timers
from holon.agent.handle import Agent
from holon.runtime import timer_fire
from holon.store import jsonl


def _ticks(home) -> list[dict]:
    return [m for m in home.queue.peek_all() if m["kind"] == "timer_tick"]


def _events(home, kind: str) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == kind]


def test_one_shot_timer_fires_once_and_is_removed(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timer = timers.create(agent, after="5m", text="check the deploy")
    a = Agent(agent)
    set_now(monkeypatch, T0 + 299)
    assert timer_fire.fire_due(a) == [] and _ticks(agent) == []
    set_now(monkeypatch, T0 + 300)
    assert timer_fire.fire_due(a) == [timer["id"]]
    assert timers.load(agent) == []
    (msg,) = _ticks(agent)
    assert msg["origin"] == {"kind": "timer", "timer_id": timer["id"]}
    assert msg["trust"] == "trusted_system" and msg["admission_context"] == "runtime_owned"
    assert msg["body"]["text"] == (
        f"Timer {timer['id']} fired (planned for {clock.iso(T0 + 300)}).\ncheck the deploy"
    )
    assert msg["metadata"]["missed_count"] == 0 and msg["metadata"]["missed_at"] == []
    assert msg["metadata"]["timer_source"] == "operator"
    (event,) = _events(agent, "timer_fired")
    assert event == {"timer_id": timer["id"], "planned_at": clock.iso(T0 + 300), "missed_count": 0}
    assert timer_fire.fire_due(a) == []


def test_repeating_timer_counts_fires_and_keeps_its_grid(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timer = timers.create(agent, every="10m")
    a = Agent(agent)
    set_now(monkeypatch, T0 + 605)
    assert timer_fire.fire_due(a) == [timer["id"]]
    (saved,) = timers.load(agent)
    assert saved["due_ts"] == T0 + 1200 and saved["due_at"] == clock.iso(T0 + 1200)
    assert saved["fired_count"] == 1 and saved["last_fired_at"] == clock.iso(T0 + 605)
    set_now(monkeypatch, T0 + 1201)
    timer_fire.fire_due(a)
    assert timers.load(agent)[0]["fired_count"] == 2


def test_long_outage_lists_at_most_twenty_missed_occurrences(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timers.create(agent, every="1m")
    set_now(monkeypatch, T0 + 25 * 60 + 30)  # 25 planned occurrences passed
    timer_fire.fire_due(Agent(agent))
    (msg,) = _ticks(agent)
    meta = msg["metadata"]
    assert meta["missed_count"] == 24 and len(meta["missed_at"]) == timer_fire.MAX_LISTED_MISSED
    assert meta["planned_at"] == clock.iso(T0 + 25 * 60)
    assert "Missed 24 earlier occurrence(s) while no tick ran: " in msg["body"]["text"]
    assert msg["body"]["text"].endswith(" and 4 more.")
    assert timers.load(agent)[0]["due_ts"] == T0 + 26 * 60


def test_declining_guard_skips_the_wake_but_advances_the_timer(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timer = timers.create(agent, every="1h", guard="exit 3")
    set_now(monkeypatch, T0 + 3601)
    assert timer_fire.fire_due(Agent(agent)) == []
    assert _ticks(agent) == []
    (declined,) = _events(agent, "timer_guard_declined")
    assert declined == {"timer_id": timer["id"], "guard": "exit 3", "exit_status": 3}
    (saved,) = timers.load(agent)
    assert saved["due_ts"] == T0 + 7200 and saved["fired_count"] == 0


def test_guard_runs_in_the_agent_home(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timer = timers.create(agent, after="1s", guard="test -f AGENTS.md")
    set_now(monkeypatch, T0 + 2)
    assert timer_fire.fire_due(Agent(agent)) == [timer["id"]]


def test_guard_that_hangs_times_out_as_declined(agent, monkeypatch):
    monkeypatch.setenv("HOLON_TIMER_GUARD_TIMEOUT_S", "1")
    set_now(monkeypatch, T0)
    timer = timers.create(agent, after="1s", guard="exec sleep 3")
    set_now(monkeypatch, T0 + 2)
    assert timer_fire.fire_due(Agent(agent)) == []
    (declined,) = _events(agent, "timer_guard_declined")
    assert declined["timer_id"] == timer["id"] and declined["exit_status"] == "timeout"
    assert timers.load(agent) == []


def test_unreadable_timer_file_is_set_aside_and_the_others_fire(agent, monkeypatch):
    set_now(monkeypatch, T0)
    agent.timers.mkdir(parents=True, exist_ok=True)
    (agent.timers / "broken.json").write_text("[]")
    good = timers.create(agent, after="1s")
    set_now(monkeypatch, T0 + 5)
    assert timer_fire.fire(Agent(agent), ["broken", good["id"]]) == [good["id"]]
    assert not (agent.timers / "broken.json").exists()
    assert (agent.timers / "broken.json.corrupt").read_text() == "[]"  # kept for the operator


def test_due_occurrences_always_include_the_due_one():
    timer = {"schedule": "every", "interval_s": 3600.0, "due_ts": T0}
    assert timer_fire._due_occurrences(timer, T0 + 3599) == [T0]
    assert timer_fire._due_occurrences(timer, T0 + 7200) == [T0, T0 + 3600, T0 + 7200]
    once = {"schedule": "once", "due_ts": T0}
    assert timer_fire._due_occurrences(once, T0 + 10**6) == [T0]


def test_a_fire_killed_before_rescheduling_does_not_queue_the_occurrence_twice(agent, monkeypatch):
    """The timer_tick is queued, then the process dies before the timer file is rewritten: the
    next fire finds that occurrence queued and only reschedules (a later occurrence still fires)."""
    set_now(monkeypatch, T0)
    timer = timers.create(agent, every="1h", text="hourly")
    a = Agent(agent)
    set_now(monkeypatch, T0 + 3600)
    monkeypatch.setattr(timers, "save", lambda *_: (_ for _ in ()).throw(SystemExit("killed")))
    try:
        timer_fire.fire_due(a)
    except SystemExit:
        pass
    monkeypatch.undo()
    set_now(monkeypatch, T0 + 3601)
    assert len(_ticks(agent)) == 1 and timers.load(agent)[0]["due_ts"] == T0 + 3600
    assert timer_fire.fire_due(a) == []  # already queued: not again
    (saved,) = timers.load(agent)
    assert len(_ticks(agent)) == 1 and saved["due_ts"] == T0 + 7200 and saved["fired_count"] == 1
    set_now(monkeypatch, T0 + 7200)
    assert timer_fire.fire_due(a) == [timer["id"]] and len(_ticks(agent)) == 2

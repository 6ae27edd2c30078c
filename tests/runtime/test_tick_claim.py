"""holon.runtime.tick: claim validation, dead letters, redelivery, outcomes, next_due."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T0, set_now

from holon.agent import admission, control, timers
from holon.agent.handle import Agent
from holon.model.records import AgentStatus
from holon.runtime.tick import tick
from holon.runtime.turn import fate
from holon.store import jsonl
from holon.store.locks import FileLock


def _prompt(home, text: str) -> dict:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def _events(home, kind: str) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == kind]


def _briefs(home, kind: str) -> list[dict]:
    return [b for b in jsonl.read(home.briefs) if b["kind"] == kind]


def test_invalid_envelope_is_dead_lettered_once_and_the_next_message_runs(agent, script):
    bogus = {"id": "msg_bogus", "kind": "operator_prompt", "body": {"type": "text", "text": "x"}}
    name = agent.queue.put(bogus, "interject")  # band 0: claimed before the valid prompt
    env = _prompt(agent, "hello")
    report = tick(agent, until_idle=True, model=script({"text": "hi there"}))
    assert report.outcome == "ran"
    assert report.dead_lettered == ["msg_bogus"]
    assert [(t["message_id"], t["final_text"]) for t in report.turns] == [(env["id"], "hi there")]
    assert agent.queue.dead_letters() == [name]
    assert json.loads((agent.queue.dead / name).read_text())["id"] == "msg_bogus"
    (dead,) = _events(agent, "message_dead_lettered")
    assert dead["message_id"] == "msg_bogus" and dead["queue_file"] == f"queue/dead/{name}"
    assert dead["reason"].startswith("because it is not a valid message envelope (")
    (failure,) = _briefs(agent, "failure")
    assert failure["related_message_id"] == "msg_bogus"
    assert "not a valid message envelope" in failure["text"]
    assert f"queue/dead/{name}" in failure["text"]
    messages = [e for e in jsonl.read(agent.transcript) if e["kind"] == "message"]
    assert [m["message_id"] for m in messages] == [env["id"]]  # the bogus record never ran

    again = tick(agent, until_idle=True)
    assert again.outcome == "idle" and again.dead_lettered == []
    assert len(_events(agent, "message_dead_lettered")) == 1
    assert len(_briefs(agent, "failure")) == 1


def test_invalid_envelope_without_id_is_named_by_its_file(agent):
    name = agent.queue.put({"kind": "nonsense"}, "normal")
    report = tick(agent)
    assert report.dead_lettered == [name] and report.turns == []
    assert agent.queue.dead_letters() == [name]
    (dead,) = _events(agent, "message_dead_lettered")
    assert dead["message_id"] == name and dead["delivery_attempts"] == 0


def test_json_that_is_not_an_object_is_quarantined_without_a_brief(agent):
    (agent.queue.new / "2-00000000000000000001-1-beef.json").write_text("[1, 2]\n")
    report = tick(agent)
    assert report.outcome == "idle" and report.dead_lettered == []
    assert agent.queue.dead_letters() == ["2-00000000000000000001-1-beef.json.unreadable"]
    assert _briefs(agent, "failure") == []


def test_message_left_in_cur_is_redelivered_and_run(agent, script):
    env = _prompt(agent, "interrupted earlier")
    name, _ = agent.queue.claim()  # a tick that claimed it and died
    report = tick(agent, model=script({"text": "done now"}))
    assert report.recovered == [env["id"]]
    assert report.turns[0]["message_id"] == env["id"] and report.turns[0]["status"] == "completed"
    (redelivered,) = _events(agent, "message_redelivered")
    assert redelivered == {"message_id": env["id"], "delivery_attempts": 1}
    (started,) = _events(agent, "message_processing_started")
    assert started["delivery_attempts"] == 1
    assert not agent.queue.in_progress() and not agent.queue.pending()
    assert name not in agent.queue.dead_letters()


def test_message_past_the_delivery_limit_is_dead_lettered_and_its_turn_dropped(agent, monkeypatch):
    monkeypatch.setenv("HOLON_DELIVERY_LIMIT", "2")
    env = _prompt(agent, "poison")
    name, record = agent.queue.claim()
    record["delivery_attempts"] = 1
    agent.queue.rewrite_cur(name, record)
    Agent(agent).update_state(lambda s: s.inflight.update({env["id"]: {"turn_id": "turn_x"}}))
    report = tick(agent)
    assert report.dead_lettered == [env["id"]] and report.recovered == []
    assert json.loads((agent.queue.dead / name).read_text())["delivery_attempts"] == 2
    (dead,) = _events(agent, "message_dead_lettered")
    assert dead["reason"] == "after 2 delivery attempts that did not finish"
    assert env["id"] not in Agent(agent).state().inflight
    assert "after 2 delivery attempts" in _briefs(agent, "failure")[0]["text"]


def test_interrupted_record_without_id_does_not_wedge_the_tick(agent):
    (agent.queue.cur / "2-00000000000000000001-1-abcd.json").write_text('{"kind": "x"}\n')
    report = tick(agent)
    assert report.outcome == "idle"


def test_next_due_is_refreshed_at_the_end_of_an_idle_tick(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timers.create(agent, after="10m", text="later")  # the store alone does not refresh next_due
    assert not agent.next_due.exists()
    report = tick(agent)
    assert report.outcome == "idle"
    assert float(agent.next_due.read_text()) == pytest.approx(T0 + 600)
    assert Agent(agent).state().last_tick_at is not None


def test_timer_created_during_the_turn_appears_in_next_due(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    _prompt(agent, "check back in five minutes")
    model = script(
        {
            "text": "Resting.",
            "tool_calls": [
                {"name": "Sleep", "arguments": {"duration_ms": 300_000, "reason": "check back"}}
            ],
        },
        {"text": "Sleeping."},
    )
    report = tick(agent, model=model)
    assert report.turns[0]["status"] == "completed"
    assert [t["id"] for t in timers.load(agent)] == ["sleep"]
    assert float(agent.next_due.read_text()) == pytest.approx(T0 + 300)


def test_until_idle_respects_max_turns(agent, script):
    ids = [_prompt(agent, f"q{i}")["id"] for i in range(3)]
    model = script(*[{"text": f"a{i}"} for i in range(3)])
    report = tick(agent, until_idle=True, max_turns=2, model=model)
    assert [t["message_id"] for t in report.turns] == ids[:2]
    assert len(agent.queue.pending()) == 1
    assert [t["message_id"] for t in tick(agent, model=model).turns] == ids[2:]


def test_without_until_idle_one_turn_runs(agent, script):
    for i in range(2):
        _prompt(agent, f"q{i}")
    report = tick(agent, model=script({"text": "one"}, {"text": "two"}))
    assert len(report.turns) == 1 and len(agent.queue.pending()) == 1


def test_paused_agent_keeps_its_queue(agent):
    _prompt(agent, "wait for me")
    control.pause(agent)
    report = tick(agent)
    assert report.outcome == "paused" and report.turns == []
    assert len(agent.queue.pending()) == 1
    assert report.to_dict() == {"agent_id": "a", "outcome": "paused"}


def test_busy_when_another_tick_holds_the_turn_lock(agent):
    _prompt(agent, "x")
    agent.locks.mkdir(parents=True, exist_ok=True)
    held = FileLock(agent.turn_lock)
    held.acquire(blocking=False)
    try:
        report = tick(agent)
    finally:
        held.release()
    assert report.outcome == "busy" and len(agent.queue.pending()) == 1


def test_liveness_only_wake_runs_no_model_turn(agent):
    def asleep(s):
        s.status = AgentStatus.asleep
        s.sleeping_until = "2027-01-01T00:00:00.000Z"
        s.closure = {"outcome": "completed"}

    Agent(agent).update_state(asleep)
    body = {"type": "json", "value": {"liveness_only": True, "note": "ping"}}
    env = admission.admit(agent, "runtime", "system_tick", body, source="wake_hint")
    report = tick(agent)  # no model is configured: a model turn would fail
    assert report.outcome == "woke" and report.liveness == [env["id"]] and report.turns == []
    assert not agent.transcript.exists()
    state = Agent(agent).state()
    assert state.status == AgentStatus.awake_idle and state.sleeping_until is None
    assert state.last_continuation["mode"] == "liveness_only"
    assert state.last_wake_reason == "system_tick"
    (woke,) = _events(agent, "liveness_wake")
    assert woke == {
        "message_id": env["id"],
        "mode": "liveness_only",
        "prior_closure_outcome": "completed",
    }


def test_delivery_limit_has_a_floor_of_one(monkeypatch):
    monkeypatch.setenv("HOLON_DELIVERY_LIMIT", "0")
    assert fate.delivery_limit() == 1
    monkeypatch.delenv("HOLON_DELIVERY_LIMIT")
    assert fate.delivery_limit() == fate.DEFAULT_DELIVERY_LIMIT

"""holon.runtime.scheduler: timers, wake hints, rechecks and work activation become messages."""

from __future__ import annotations

from scenario_helpers import T0, set_now

from holon import clock
from holon.agent import admission, control, timers, wakehints, workitems
from holon.agent.handle import Agent
from holon.runtime import scheduler
from holon.runtime.tick import tick
from holon.store import jsonl


def _queued(home) -> list[dict]:
    return home.queue.peek_all()


def _continuable(a: Agent, rec: dict, mode: str = "activate_queued") -> None:
    def apply(s):
        s.closure = {
            "outcome": "continuable",
            "work_signal": {
                "work_item_id": rec["id"],
                "status": "queued",
                "reactivation_mode": mode,
            },
        }

    a.update_state(apply)


def test_nothing_due_fires_nothing(agent):
    assert scheduler.fire_due(Agent(agent)) == [] and _queued(agent) == []


def test_paused_or_stopped_agent_fires_nothing(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timers.create(agent, after="1m")
    wakehints.submit(agent, trigger_id=None, body="payload")
    set_now(monkeypatch, T0 + 120)
    control.pause(agent)
    assert scheduler.fire_due(Agent(agent)) == []
    control.stop(agent)
    assert scheduler.fire_due(Agent(agent)) == []
    assert _queued(agent) == [] and agent.wake_hint.exists() and len(timers.load(agent)) == 1


def test_due_timer_and_wake_hint_fire_in_that_order(agent, monkeypatch):
    set_now(monkeypatch, T0)
    timer = timers.create(agent, after="1m", text="stand-up")
    wakehints.submit(agent, trigger_id=None, source="ci")
    set_now(monkeypatch, T0 + 61)
    fired = scheduler.fire_due(Agent(agent))
    assert fired[0] == timer["id"] and len(fired) == 2
    kinds = [(m["kind"], m["origin"]["kind"]) for m in _queued(agent)]
    assert kinds == [("timer_tick", "timer"), ("system_tick", "system")]
    hint = _queued(agent)[1]
    assert hint["id"] == fired[1] and hint["body"]["value"]["liveness_only"] is True
    assert not agent.wake_hint.exists()


def test_blocked_item_gets_one_recheck_reminder(agent, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    rec = workitems.new_record("a", "Wait for vendor")
    workitems.set_blocker(rec, "vendor reply", 60_000)
    rec = workitems.append(a, rec)
    assert scheduler.fire_due(a) == []  # not yet
    set_now(monkeypatch, T0 + 61)
    (fired,) = scheduler.fire_due(a)
    (msg,) = _queued(agent)
    assert msg["id"] == fired and msg["priority"] == "background"
    assert msg["work_item_id"] == rec["id"]
    assert msg["metadata"] == {"reason": "work_item_recheck"}
    assert msg["body"]["text"].startswith(f"Recheck reminder for work item {rec['id']}")
    assert '"vendor reply"' in msg["body"]["text"]
    stored = workitems.get(agent, rec["id"])
    assert stored["recheck_consumed_at"] == clock.iso(T0 + 61)
    assert stored["blocked_by"] == "vendor reply"  # the reminder does not change the item
    assert workitems.readiness(stored, None) == "triggered_blocked"
    assert scheduler.fire_due(a) == []  # consumed: only once


def test_continuable_closure_activates_one_keep_working_message(agent):
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Queued job"))
    _continuable(a, rec)
    assert scheduler.fire_due(a, activate=False) == []
    (fired,) = scheduler.fire_due(a)
    (msg,) = _queued(agent)
    assert msg["id"] == fired and msg["work_item_id"] == rec["id"]
    assert msg["metadata"] == {"reason": "activate_queued"}
    assert "pick one with PickWorkItem" in msg["body"]["text"]
    assert a.state().closure["activation_message_id"] == fired
    agent.queue.claim()
    assert scheduler.fire_due(a) == []  # activated once per closure


def test_continue_active_names_the_item(agent):
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Current job"))
    _continuable(a, rec, "continue_active")
    scheduler.fire_due(a)
    (msg,) = _queued(agent)
    assert msg["body"]["text"] == f"Continue work item {rec['id']}: Current job"
    assert msg["metadata"] == {"reason": "continue_active"}


def test_no_activation_while_messages_wait_or_the_item_cannot_run(agent):
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Job"))
    _continuable(a, rec)
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("first"))
    assert scheduler.fire_due(a) == []  # the queued prompt runs first
    agent.queue.claim()
    workitems.append(a, {**rec, "blocked_by": "disk full"})
    assert scheduler.fire_due(a) == []
    workitems.append(a, {**rec, "blocked_by": None})
    a.update_state(lambda s: setattr(s, "status", s.status.__class__("asleep")))
    assert scheduler.fire_due(a) == []  # only an awake idle agent is activated
    a.update_state(lambda s: setattr(s, "status", s.status.__class__("awake_idle")))
    assert len(scheduler.fire_due(a)) == 1


def test_rechecks_and_keep_working_carry_the_model_of_the_last_turn(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    model = script({"text": "blocked for now"})
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("go"))
    tick(agent, model=model)  # an operator-chosen model for this turn
    assert a.state().closure["model_ref"] == model
    rec = workitems.new_record("a", "Wait for vendor")
    workitems.set_blocker(rec, "vendor reply", 60_000)
    workitems.append(a, rec)
    job = workitems.append(a, workitems.new_record("a", "Queued job"))
    _continuable(a, job)
    a.update_state(lambda s: setattr(s, "closure", {**s.closure, "model_ref": model}))
    (activation,) = scheduler.fire_due(a)
    set_now(monkeypatch, T0 + 61)
    agent.queue.claim()
    (recheck,) = scheduler.fire_due(a, activate=False)
    carried = {m["id"]: m["model_ref"] for m in jsonl.read(agent.messages)}
    assert carried[activation] == model and carried[recheck] == model

"""holon.ops.work: listing, show, and the control-plane create with idle activation."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T0, cli, set_now

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.model.records import AgentStatus
from holon.ops import work
from holon.runtime.tick import tick
from holon.store import jsonl


def test_create_queues_an_item_with_its_plan(agent):
    rec = work.create(agent, "  Ship the notes  ", plan="1. draft\n2. publish")
    assert rec["objective"] == "Ship the notes" and rec["state"] == "open"
    assert rec["readiness"] == "queued_runnable"
    assert agent.plan_path(rec["id"]).read_text() == "1. draft\n2. publish\n"
    assert rec["plan_artifact"]["preview"].startswith("1. draft")
    (event,) = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "work_item_enqueued"]
    assert event == {
        "work_item_id": rec["id"],
        "objective": "Ship the notes",
        "via": "control_plane",
    }
    assert not agent.messages.exists() or not list(jsonl.read(agent.messages))  # no message
    assert Agent(agent).state().current_work_item_id is None  # no focus change


def test_create_refuses_an_empty_objective(agent):
    with pytest.raises(UsageError) as err:
        work.create(agent, "   ")
    assert err.value.kind == "invalid_objective"
    assert workitems.load_all(agent) == {}


def test_listing_and_show(agent):
    a = Agent(agent)
    done = workitems.append(a, {**workitems.new_record("a", "Old"), "state": "completed"})
    workitems.record_delivery_summary(a, done["id"], "Old report", turn_id="t", message_id=None)
    current = work.create(agent, "Current")
    a.update_state(lambda s: setattr(s, "current_work_item_id", current["id"]))
    rows = work.listing(agent)
    assert [(r["objective"], r["readiness"]) for r in rows] == [("Current", "current")]
    rows = work.listing(agent, include_completed=True)
    assert [r["readiness"] for r in rows] == ["completed", "current"]
    assert rows[0]["completion_report"] == "Old report"
    shown = work.show(agent, done["id"])
    assert shown["completion_report"] == "Old report" and shown["scheduling_state"] == "completed"
    with pytest.raises(UsageError) as err:
        work.show(agent, "wi_nope")
    assert err.value.kind == "unknown_work_item" and "--all" in err.value.hint


def test_create_on_an_idle_agent_activates_it_for_the_next_tick(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    rec = work.create(agent, "Ship it")
    closure = Agent(agent).state().closure
    assert closure["outcome"] == "continuable"
    assert closure["work_signal"] == {
        "work_item_id": rec["id"],
        "status": "queued",
        "reactivation_mode": "activate_queued",
    }
    assert float(agent.next_due.read_text()) == pytest.approx(T0)
    second = work.create(agent, "Later")  # the signal already points at the first item
    assert Agent(agent).state().closure["work_signal"]["work_item_id"] == rec["id"]
    assert second["readiness"] == "queued_runnable"
    report = tick(
        agent,
        model=script(
            {"tool_calls": [{"name": "PickWorkItem", "arguments": {"work_item_id": rec["id"]}}]},
            {"text": "Picked."},
        ),
    )
    (turn,) = report.turns
    msg = next(m for m in jsonl.read(agent.messages) if m["id"] == turn["message_id"])
    assert msg["kind"] == "system_tick" and msg["metadata"] == {"reason": "activate_queued"}
    assert Agent(agent).state().current_work_item_id == rec["id"]


def test_no_activation_when_the_agent_is_busy_asleep_or_focused(agent):
    a = Agent(agent)
    a.update_state(lambda s: setattr(s, "status", AgentStatus.asleep))
    work.create(agent, "While asleep")
    assert a.state().closure is None and not agent.next_due.exists()
    a.update_state(lambda s: setattr(s, "status", AgentStatus.awake_idle))
    a.update_state(lambda s: setattr(s, "current_work_item_id", "wi_other"))
    work.create(agent, "While focused")
    assert a.state().closure is None
    a.update_state(lambda s: setattr(s, "current_work_item_id", None))
    a.update_state(lambda s: s.inflight.update({"msg_x": {"turn_id": "turn_x"}}))
    work.create(agent, "While a turn is in flight")
    assert a.state().closure is None


def test_a_consumed_activation_is_renewed(agent):
    a = Agent(agent)
    first = work.create(agent, "First")
    a.update_state(lambda s: setattr(s, "closure", {**s.closure, "activation_message_id": "msg_1"}))
    work.create(agent, "Second")
    closure = a.state().closure
    assert "activation_message_id" not in closure
    assert closure["work_signal"]["work_item_id"] == first["id"]


def test_waiting_closure_is_left_alone(agent):
    a = Agent(agent)
    a.update_state(
        lambda s: setattr(s, "closure", {"outcome": "waiting", "waiting_reason": "awaiting_timer"})
    )
    work.create(agent, "Queued")
    assert a.state().closure == {"outcome": "waiting", "waiting_reason": "awaiting_timer"}


def test_work_commands(agent):
    code, out, _ = cli("work", "create", "a", "From the CLI", "--json")
    assert code == 0
    rec = json.loads(out)
    code, out, _ = cli("work", "list", "a")
    assert code == 0 and out.split() == [rec["id"], "queued_runnable", "From", "the", "CLI"]
    code, out, _ = cli("work", "show", "a", rec["id"])
    assert json.loads(out)["objective"] == "From the CLI"
    code, _, err = cli("work", "show", "a", "wi_missing")
    assert code == 2 and "unknown_work_item" in err

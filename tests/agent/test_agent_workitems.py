"""holon.agent.workitems: the ledger (latest wins), blockers and rechecks, plans, summaries."""

from __future__ import annotations

import hashlib

import pytest

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.store import jsonl

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


@pytest.fixture
def now(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))

    def set_to(ts: float) -> None:
        monkeypatch.setenv("HOLON_NOW", str(ts))

    return set_to


def test_new_record_shape(now):
    rec = workitems.new_record("a", "Ship it", plan_status="ready", todo_list=[{"text": "x"}])
    assert rec["id"].startswith("wi_") and rec["agent_id"] == "a"
    assert (rec["objective"], rec["state"], rec["plan_status"]) == ("Ship it", "open", "ready")
    assert rec["todo_list"] == [{"text": "x"}] and rec["blocked_by"] is None
    assert rec["created_at"] == rec["updated_at"] == "2027-01-15T08:00:00.000Z"
    assert workitems.new_record("a", "other")["todo_list"] == []


def test_append_and_load_all_latest_wins_in_creation_order(agent, now):
    a = Agent(agent)
    first = workitems.append(a, workitems.new_record("a", "first"))
    second = workitems.append(a, workitems.new_record("a", "second"))
    now(T0 + 60)
    updated = workitems.append(a, {**first, "objective": "first, revised"})
    assert updated["updated_at"] == "2027-01-15T08:01:00.000Z"
    assert updated["created_at"] == first["created_at"]
    assert len(list(jsonl.read(agent.work_items))) == 3
    items = workitems.load_all(agent)
    assert list(items) == [first["id"], second["id"]]
    assert items[first["id"]]["objective"] == "first, revised"
    assert workitems.get(agent, second["id"]) == second
    assert workitems.get(agent, "wi_missing") is None


def test_load_all_skips_records_without_id(agent):
    jsonl.append(agent.work_items, {"objective": "no id"})
    jsonl.append(agent.work_items, {"id": 5})
    assert workitems.load_all(agent) == {}


def test_set_blocker_and_clear(now):
    rec = workitems.new_record("a", "x")
    workitems.set_blocker(rec, "waiting for review", 90_000)
    assert rec["blocked_by"] == "waiting for review"
    assert rec["recheck_at"] == "2027-01-15T08:01:30.000Z" and rec["recheck_consumed_at"] is None
    rec["recheck_consumed_at"] = "later"
    workitems.set_blocker(rec, None, 5)
    assert (rec["blocked_by"], rec["recheck_at"], rec["recheck_consumed_at"]) == (None, None, None)


def test_set_blocker_default_recheck(now, monkeypatch):
    rec = workitems.new_record("a", "x")
    workitems.set_blocker(rec, "b", None)
    assert rec["recheck_at"] == "2027-01-15T09:00:00.000Z"  # one hour
    monkeypatch.setenv("HOLON_WORK_ITEM_DEFAULT_RECHECK_MS", "5000")
    workitems.set_blocker(rec, "b", 0)
    assert rec["recheck_at"] == "2027-01-15T08:00:05.000Z"
    monkeypatch.setenv("HOLON_WORK_ITEM_DEFAULT_RECHECK_MS", "0")
    assert workitems.default_recheck_ms() == 1  # never zero


@pytest.mark.parametrize(
    "changes, sched, ready",
    [
        ({}, "runnable", "queued_runnable"),
        ({"blocked_by": "ci"}, "blocked", "blocked"),
        ({"blocked_by": "ci", "recheck_consumed_at": "t"}, "blocked", "triggered_blocked"),
        (
            {"plan_status": "needs_input", "blocked_by": "ci"},
            "waiting_operator",
            "waiting_for_operator",
        ),
        (
            {"state": "completed", "plan_status": "needs_input", "blocked_by": "ci"},
            "completed",
            "completed",
        ),
    ],
)
def test_scheduling_state_and_readiness(changes, sched, ready):
    rec = {**workitems.new_record("a", "x"), **changes}
    assert workitems.scheduling_state(rec) == sched
    assert workitems.readiness(rec, None) == ready
    assert workitems.readiness(rec, "wi_other") == ready


def test_current_item_readiness():
    rec = workitems.new_record("a", "x")
    assert workitems.readiness(rec, rec["id"]) == "current"
    assert workitems.readiness({**rec, "blocked_by": "b"}, rec["id"]) == "current"
    assert workitems.readiness({**rec, "state": "completed"}, rec["id"]) == "completed"


def test_plan_artifact_preview_and_hash(agent, now):
    wid = "wi_plan"
    assert workitems.plan_artifact(agent, wid) is None
    workitems.write_plan(agent, wid, "# Plan\n- step")
    data = agent.plan_path(wid).read_bytes()
    assert data == b"# Plan\n- step\n"  # a final newline is added
    art = workitems.plan_artifact(agent, wid)
    assert art["path"] == str(agent.plan_path(wid)) and art["bytes"] == len(data)
    assert art["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert art["preview"] == data.decode() and art["preview_complete"] is True
    assert art["updated_at"].endswith("Z")
    long = "é" * (workitems.PREVIEW_CHARS + 10)
    workitems.write_plan(agent, wid, long)
    art = workitems.plan_artifact(agent, wid)
    assert art["preview"] == "é" * workitems.PREVIEW_CHARS and art["preview_complete"] is False
    assert art["bytes"] == len(long.encode()) + 1


def test_empty_plan_gets_no_newline(agent):
    workitems.write_plan(agent, "wi_e", "")
    assert agent.plan_path("wi_e").read_bytes() == b""
    assert workitems.plan_artifact(agent, "wi_e")["preview_complete"] is True


def test_delivery_summaries_newest_per_item_and_view(agent, now):
    a = Agent(agent)
    done = workitems.append(
        a,
        {
            **workitems.new_record("a", "done"),
            "state": "completed",
            "result_summary": "fallback report",
            "plan": "inline plan",
        },
    )
    other = workitems.append(
        a,
        {
            **workitems.new_record("a", "other"),
            "state": "completed",
            "result_summary": "only the record",
        },
    )
    workitems.record_delivery_summary(
        a, done["id"], "first report", turn_id="turn_1", message_id=None
    )
    rec = workitems.record_delivery_summary(
        a, done["id"], "final report", turn_id="turn_2", message_id="msg_1"
    )
    assert rec["id"].startswith("dsum_") and rec["agent_id"] == "a"
    summaries = workitems.delivery_summaries(agent)
    assert list(summaries) == [done["id"]] and summaries[done["id"]]["text"] == "final report"
    view = workitems.view(agent, done, None)
    assert view["completion_report"] == "final report"
    assert "plan" not in view and "schema_version" not in view
    assert view["readiness"] == view["scheduling_state"] == "completed"
    assert view["plan_artifact"] is None
    assert workitems.view(agent, other, None, summaries)["completion_report"] == "only the record"
    open_view = workitems.view(agent, workitems.new_record("a", "open"), None)
    assert "completion_report" not in open_view and open_view["readiness"] == "queued_runnable"


def test_due_rechecks_and_next_recheck(agent, now):
    a = Agent(agent)
    assert workitems.next_recheck(agent) is None

    def blocked(objective, ms, **extra):
        rec = workitems.new_record("a", objective)
        workitems.set_blocker(rec, "waiting", ms)
        return workitems.append(a, {**rec, **extra})

    soon = blocked("soon", 60_000)
    later = blocked("later", 600_000)
    blocked("consumed", 1_000, recheck_consumed_at="2027-01-15T08:00:01.000Z")
    blocked("done", 1_000, state="completed")
    workitems.append(a, workitems.new_record("a", "runnable"))
    assert workitems.next_recheck(agent) == T0 + 60
    assert workitems.due_rechecks(agent, T0 + 59) == []
    assert [r["id"] for r in workitems.due_rechecks(agent, T0 + 60)] == [soon["id"]]
    assert [r["id"] for r in workitems.due_rechecks(agent, T0 + 3600)] == [soon["id"], later["id"]]
    workitems.append(a, {**soon, "recheck_consumed_at": "2027-01-15T08:01:00.000Z"})
    assert workitems.next_recheck(agent) == T0 + 600

"""holon.prompt.workqueue: the work-queue context block and the stale-progress reminder."""

from __future__ import annotations

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.prompt import workqueue


def _item(a: Agent, objective: str, **fields) -> dict:
    return workitems.append(a, {**workitems.new_record(a.id, objective), **fields})


def _current(a: Agent, rec: dict) -> None:
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))


def test_no_block_without_work_items(agent):
    assert workqueue.projection(Agent(agent)) is None


def test_block_without_a_current_item_lists_candidates_in_order(agent):
    a = Agent(agent)
    blocked = _item(a, "Blocked one", blocked_by="vendor")
    queued = _item(a, "Queued one", plan_status="ready")
    asking = _item(a, "Needs input", plan_status="needs_input")
    triggered = _item(a, "Rechecked", blocked_by="disk", recheck_consumed_at="2027-01-01T00:00Z")
    silent = _item(a, "Done silently", state="completed")
    text = workqueue.projection(a)
    lines = text.splitlines()
    assert lines[:2] == [
        "# Work queue",
        "No current work item. Call PickWorkItem to focus on one of the candidates.",
    ]
    headings = [ln for ln in lines if ln.startswith("## ")]
    assert headings == [
        "## triggered_blocked",
        "## queued_runnable",
        "## waiting_for_operator",
        "## blocked",
    ]
    assert f"- {queued['id']} [ready] Queued one" in lines
    assert f"- {blocked['id']} [draft] Blocked one — blocked by: vendor" in lines
    assert f"- {triggered['id']} [draft] Rechecked — blocked by: disk" in lines
    assert f"- {asking['id']} [needs_input] Needs input" in lines
    assert silent["id"] not in text  # completed items appear only through a report


def test_current_item_in_full_with_plan_todos_tasks_and_trace(agent):
    a = Agent(agent)
    rec = _item(
        a,
        "Ship release",
        blocked_by="CI",
        recheck_at="2027-01-15T09:00:00.000Z",
        todo_list=[
            {"text": "draft", "state": "completed"},
            {"text": "publish", "state": "pending"},
        ],
    )
    workitems.write_plan(agent, rec["id"], "1. draft\n2. publish")
    _current(a, rec)
    a.update_state(lambda s: setattr(s, "active_task_ids", ["task_ci"]))
    a.brief("ack", "drafted the notes", work_item_id=rec["id"])
    a.brief("ack", "about something else")
    text = workqueue.projection(a)
    assert "## Current work item\nid: " + rec["id"] in text
    assert "objective: Ship release\nplan_status: draft" in text
    assert f"plan artifact: {agent.plan_path(rec['id'])} (" in text
    assert "preview complete)\n1. draft\n2. publish" in text
    assert "- [completed] draft\n- [pending] publish" in text
    assert "blocked_by: CI (recheck at 2027-01-15T09:00:00.000Z)" in text
    assert "active tasks: task_ci" in text
    assert "### Recent progress on this item\n- brief: drafted the notes" in text
    assert "something else" not in text
    assert "No current work item" not in text


def test_completed_items_show_their_latest_report(agent):
    a = Agent(agent)
    rec = _item(a, "Write report", state="completed")
    workitems.record_delivery_summary(a, rec["id"], "old", turn_id="t", message_id=None)
    workitems.record_delivery_summary(a, rec["id"], "Report filed.", turn_id="t", message_id=None)
    text = workqueue.projection(a)
    assert text.endswith(
        f"## completed_recent\n- {rec['id']} Write report\n  report: Report filed."
    )


def _rounds(n: int) -> list[dict]:
    return [{"text": ""}] * n


def _update(index: int) -> dict:
    key = f"{index}:c"
    return {key: {"key": key, "tool_name": "UpdateWorkItem", "status": "success"}}


def test_stale_reminder_counts_rounds_since_the_last_update(agent, monkeypatch):
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "2")
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_COOLDOWN_ROUNDS", "3")
    a = Agent(agent)
    rec = _item(
        a,
        "Long job",
        blocked_by="CI",
        todo_list=[{"text": "a", "state": "completed"}, {"text": "b", "state": "pending"}],
    )
    _current(a, rec)
    assert workqueue.stale_reminder(a, _rounds(1), {}) is None
    text = workqueue.stale_reminder(a, _rounds(2), {})
    assert text.splitlines() == [
        f"[runtime reminder] 2 provider rounds without a work-item update. Current item "
        f"{rec['id']}: Long job (plan_status draft).",
        "- [pending] b",
        "blocked_by: CI",
        "If you made material progress, hit a blocker or changed scope, record it with "
        "UpdateWorkItem; otherwise carry on.",
    ]
    assert workqueue.stale_reminder(a, _rounds(4), {}) is None  # cooling down
    assert workqueue.stale_reminder(a, _rounds(5), {}) is not None
    assert workqueue.stale_reminder(a, _rounds(5), _update(3)) is None  # one stale round
    assert workqueue.stale_reminder(a, _rounds(5), _update(2)) is not None  # two
    failed = {"3:c": {"key": "3:c", "tool_name": "UpdateWorkItem", "status": "error"}}
    assert workqueue.stale_reminder(a, _rounds(5), failed) is not None


def test_stale_reminder_needs_an_open_current_item_and_a_threshold(agent, monkeypatch):
    a = Agent(agent)
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "1")
    assert workqueue.stale_reminder(a, _rounds(3), {}) is None  # no current item
    rec = _item(a, "Job")
    _current(a, rec)
    assert workqueue.stale_reminder(a, [], {}) is None
    assert workqueue.stale_reminder(a, _rounds(1), {}) is not None
    _item(a, "Job", id=rec["id"], state="completed")
    assert workqueue.stale_reminder(a, _rounds(1), {}) is None
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "0")
    assert workqueue.stale_reminder(a, _rounds(9), {}) is None


def test_stale_reminder_is_bounded(agent, monkeypatch):
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "1")
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_MAX_TOKENS", "10")
    a = Agent(agent)
    _current(a, _item(a, "x" * 500))
    assert len(workqueue.stale_reminder(a, _rounds(1), {})) == 40


def test_current_item_trace_shows_text_and_tool_executions_not_only_briefs(agent):
    """Spec, Work-Queue Prompt Projection: the recent current-WorkItem process trace comes
    from bound briefs, tool executions and assistant transcript text blocks (no thinking, no
    tool output, nothing of turns bound elsewhere)."""
    a = Agent(agent)
    rec = _item(a, "Fix the build")
    _current(a, rec)
    for turn, item in (("turn_1", rec["id"]), ("turn_2", None)):
        a.transcript("assistant_round", turn_id=turn, text=f"looking at {turn}", thinking="hmm")
        a.transcript(
            "tool_result",
            turn_id=turn,
            tool_name="ExecCommand",
            status="success",
            rendered="SECRET",
        )
        a.brief("result", f"done with {turn}", turn_id=turn, work_item_id=item)
    text = workqueue.projection(a)
    assert (
        "### Recent progress on this item\n"
        "- assistant: looking at turn_1\n"
        "- tool ExecCommand: success\n"
        "- brief: done with turn_1"
    ) in text
    assert "turn_2" not in text and "SECRET" not in text and "hmm" not in text

"""holon.runtime.turn.closure: merged tool effects, closure decisions, continuation resolution."""

from __future__ import annotations

import pytest

from holon.agent import admission, triggers, workitems
from holon.agent.handle import Agent
from holon.model.messages import MessageEnvelope
from holon.model.records import AgentState, AgentStatus
from holon.runtime.tick import tick
from holon.runtime.turn import closure
from holon.runtime.turn.closure import TurnOutcome, apply_closure, resolve_continuation
from holon.runtime.turn.state import TurnState
from holon.store import jsonl
from holon.tools.base import CompletionEffect, SleepEffect, ToolEffects

UNTIL = "2027-01-15T08:10:00.000Z"


def _msg(kind="operator_prompt", origin=None, trigger="operator_input", body=None):
    return MessageEnvelope(
        id="msg_test",
        agent_id="a",
        created_at="2027-01-15T08:00:00.000Z",
        kind=kind,
        origin=origin or {"kind": "operator"},
        trust="trusted_operator",
        authority_class="operator_instruction",
        trigger_kind=trigger,
        body=body or {"type": "text", "text": "hi"},
    )


def _prompt(home, text):
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def _result(key, status="success", effects=None, tool="Sleep"):
    data = {"key": key, "call_id": key.split(":")[1], "tool_name": tool, "status": status}
    if effects is not None:
        data["effects"] = effects
    return data


def _ts(*results) -> TurnState:
    ts = TurnState(turn_id="turn_t", message=_msg())
    ts.results = {r["key"]: r for r in results}
    return ts


# -- tool_effects --------------------------------------------------------------------------------


def test_effects_of_successful_calls_merge_in_call_order():
    ts = _ts(
        _result("0:a", effects={"sleep": {"until": UNTIL, "duration_ms": 600_000}}),
        _result(
            "0:b",
            effects={"completion": {"work_item_id": "wi_1", "report": "done"}},
            tool="CompleteWorkItem",
        ),
        _result("1:c", effects={"sleep": {"reason": "rest"}}),
    )
    merged = closure.tool_effects(ts)
    assert merged.sleep == SleepEffect(reason="rest")  # the later Sleep replaces the earlier one
    assert merged.completion == CompletionEffect(work_item_id="wi_1", report="done")


def test_effects_of_a_failed_call_are_ignored():
    ts = _ts(
        _result("0:a", effects={"sleep": {"until": UNTIL}}),
        _result("0:b", status="error", effects={"sleep": {"reason": "failed call"}}),
        _result(
            "0:c", status="error", effects={"completion": {"work_item_id": "wi_1", "report": "x"}}
        ),
    )
    merged = closure.tool_effects(ts)
    assert merged.sleep == SleepEffect(until=UNTIL) and merged.completion is None


def test_no_effects_merge_to_empty():
    merged = closure.tool_effects(_ts(_result("0:a"), _result("0:b", effects={})))
    assert merged == ToolEffects() and merged.to_record() is None


def test_turn_outcome_brief_text_and_visibility():
    plain = TurnOutcome()
    assert plain.brief_text("final") == "final" and plain.visibility == "turn_result"
    done = TurnOutcome(
        effects=ToolEffects(completion=CompletionEffect(work_item_id="wi_1", report="Report."))
    )
    assert done.brief_text("final") == "Report." and done.visibility == "work_done"


# -- apply_closure -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "outcome, turn, expected",
    [
        ("failed", TurnOutcome(waiting_reason="awaiting_timer"), {"outcome": "failed"}),
        (
            "completed",
            TurnOutcome(waiting_reason="awaiting_operator_input"),
            {"outcome": "waiting", "waiting_reason": "awaiting_operator_input"},
        ),
        (
            "completed",
            TurnOutcome(work_signal={"work_item_id": "wi_1"}),
            {"outcome": "continuable", "work_signal": {"work_item_id": "wi_1"}},
        ),
        ("completed", None, {"outcome": "completed"}),
    ],
)
def test_apply_closure_outcomes(outcome, turn, expected):
    state = AgentState(id="a", status=AgentStatus.awake_running, sleeping_until="x")
    apply_closure(state, _ts(), outcome, turn)
    got = {
        k: v for k, v in state.closure.items() if k in ("outcome", "waiting_reason", "work_signal")
    }
    assert got == expected
    assert state.closure["turn_id"] == "turn_t" and state.closure["message_id"] == "msg_test"
    assert state.closure["terminal_observed"] is True
    assert state.closure["runtime_posture"] == "awake"
    assert state.status == AgentStatus.awake_idle and state.sleeping_until is None


def test_apply_closure_posture():
    state = AgentState(id="a", status=AgentStatus.awake_running)
    apply_closure(
        state, _ts(), "completed", TurnOutcome(effects=ToolEffects(sleep=SleepEffect(until=UNTIL)))
    )
    assert state.status == AgentStatus.asleep and state.sleeping_until == UNTIL
    assert state.closure["runtime_posture"] == "asleep"
    paused = AgentState(id="a", status=AgentStatus.paused)
    apply_closure(
        paused, _ts(), "completed", TurnOutcome(effects=ToolEffects(sleep=SleepEffect(until=UNTIL)))
    )
    assert paused.status == AgentStatus.paused and paused.closure["runtime_posture"] == "paused"


# -- resolve_continuation ------------------------------------------------------------------------

LIVENESS = {"type": "json", "value": {"liveness_only": True}}
CALLBACK = {"kind": "callback", "descriptor_id": "trg_1"}


@pytest.mark.parametrize(
    "prior, message, visible, mode, matched",
    [
        (None, _msg(), True, "local_continuation", False),
        (
            {"outcome": "waiting", "waiting_reason": "awaiting_operator_input"},
            _msg(),
            True,
            "resume_expected_wait",
            True,
        ),
        (
            {"outcome": "completed"},
            _msg(
                "system_tick", {"kind": "system", "subsystem": "wake_hint"}, "system_tick", LIVENESS
            ),
            False,
            "liveness_only",
            False,
        ),
        (
            {"outcome": "continuable"},
            _msg(
                "system_tick", {"kind": "system", "subsystem": "wake_hint"}, "system_tick", LIVENESS
            ),
            True,
            "local_continuation",
            False,
        ),
        (
            {"outcome": "waiting", "waiting_reason": "awaiting_external_change"},
            _msg("system_tick", CALLBACK, "system_tick", LIVENESS),
            True,
            "resume_expected_wait",
            True,
        ),
        (
            {"outcome": "waiting", "waiting_reason": "awaiting_timer"},
            _msg("timer_tick", {"kind": "timer", "timer_id": "sleep"}, "timer_fire"),
            True,
            "resume_expected_wait",
            True,
        ),
        (
            {"outcome": "waiting", "waiting_reason": "awaiting_task_result"},
            _msg("task_status", {"kind": "task", "task_id": "t1"}, "task_status"),
            False,
            "observational",
            False,
        ),
        (
            {"outcome": "waiting", "waiting_reason": "awaiting_task_result"},
            _msg(),
            True,
            "local_continuation",
            False,
        ),
    ],
)
def test_resolve_continuation(prior, message, visible, mode, matched):
    out = resolve_continuation(prior, message)
    assert (out["model_visible"], out["mode"], out["matched_waiting_reason"]) == (
        visible,
        mode,
        matched,
    )
    assert out["message_id"] == "msg_test"
    assert out["prior_closure_outcome"] == (prior or {}).get("outcome", "completed")
    assert out["evidence"][0] == f"trigger:{message.trigger_kind}"
    if prior and prior.get("waiting_reason"):
        assert out["prior_waiting_reason"] == prior["waiting_reason"]
    else:
        assert "prior_waiting_reason" not in out


def test_waiting_reason_of_a_non_waiting_closure_is_ignored():
    prior = {"outcome": "completed", "waiting_reason": "awaiting_operator_input"}
    out = resolve_continuation(prior, _msg())
    assert out["matched_waiting_reason"] is False and "prior_waiting_reason" not in out


# -- turn_outcome against real work items --------------------------------------------------------


def test_completed_work_item_report_becomes_the_brief(agent, script):
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Write the notes"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    model = script(
        {
            "text": "Notes written and filed.",
            "tool_calls": [{"name": "CompleteWorkItem", "arguments": {"work_item_id": rec["id"]}}],
        },
        {"text": "Done."},
    )
    _prompt(agent, "finish the notes")
    out = tick(agent, model=model).turns[0]
    assert out["final_text"] == "Notes written and filed." and out["raw_final_text"] == "Done."
    (brief,) = [b for b in jsonl.read(agent.briefs) if b["kind"] == "result"]
    assert brief["visibility"] == "work_done" and brief["work_item_id"] == rec["id"]
    assert brief["text"] == "Notes written and filed."
    (result,) = [e["data"] for e in jsonl.read(agent.transcript) if e["kind"] == "tool_result"]
    assert result["effects"] == {
        "completion": {"work_item_id": rec["id"], "report": "Notes written and filed."}
    }
    assert "runtime_effect" not in result["envelope"]["result"]
    assert "effects" not in result["envelope"]["result"]
    assert '"effects"' not in result["rendered"]
    state = a.state()
    assert state.closure["outcome"] == "completed" and state.current_work_item_id is None


def test_completion_with_another_item_queued_is_continuable(agent, script):
    a = Agent(agent)
    first = workitems.append(a, workitems.new_record("a", "First"))
    second = workitems.append(a, workitems.new_record("a", "Second"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", first["id"]))
    model = script(
        {
            "text": "First done.",
            "tool_calls": [
                {"name": "CompleteWorkItem", "arguments": {"work_item_id": first["id"]}}
            ],
        },
        {"text": "ok"},
    )
    _prompt(agent, "go")
    tick(agent, model=model)
    signal = a.state().closure["work_signal"]
    assert signal == {
        "work_item_id": second["id"],
        "status": "queued",
        "reactivation_mode": "activate_queued",
    }


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"plan_status": "needs_input"}, "awaiting_operator_input"),
        ({"blocked_by": "the vendor API"}, "awaiting_external_change"),
    ],
)
def test_current_item_that_cannot_run_makes_the_turn_wait(agent, fields, reason):
    a = Agent(agent)
    rec = workitems.append(a, {**workitems.new_record("a", "Blocked thing"), **fields})
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    out = closure.turn_outcome(a, _ts())
    assert (out.waiting_reason, out.work_signal, out.work_item_id) == (reason, None, rec["id"])


def test_current_runnable_item_continues_unless_the_turn_sleeps(agent):
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Runnable"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    out = closure.turn_outcome(a, _ts())
    assert out.work_signal == {
        "work_item_id": rec["id"],
        "status": "active",
        "reactivation_mode": "continue_active",
    }
    slept = closure.turn_outcome(a, _ts(_result("0:s", effects={"sleep": {"until": UNTIL}})))
    assert slept.work_signal is None and slept.waiting_reason == "awaiting_timer"


def test_sleeping_on_active_tasks_makes_the_bound_item_waiting_task_once(agent):
    """Spec, Work-Item Persistence Foundation: the scheduling state derives from active task
    waits (`waiting_task`, projected as blocked); the wait is committed once on the bound item
    (Turn-End Work-Item Transition Commit) and ends when the task's result arrives."""
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Build"))

    def bind(s):
        s.current_work_item_id = s.bound_work_item_id = rec["id"]
        s.active_task_ids = ["task_build"]

    a.update_state(bind)
    ts = _ts(_result("0:s", effects={"sleep": {"reason": "wait for the build"}}))
    out = closure.turn_outcome(a, ts)
    assert out.waiting_reason == "awaiting_task_result"
    stored = workitems.get(agent, rec["id"])
    assert stored["wait"] == {"kind": "task", "task_ids": ["task_build"]}
    assert stored["blocked_by"] is None
    facts = workitems.wait_facts(agent, ["task_build"])
    assert workitems.scheduling_state(stored, facts) == "waiting_task"
    assert workitems.readiness(stored, None, facts) == "blocked"
    lines = len(list(jsonl.read(agent.work_items)))
    closure.turn_outcome(a, ts)  # a resumed settle does not commit it again
    assert len(list(jsonl.read(agent.work_items))) == lines
    committed = [e for e in jsonl.read(agent.events) if e["kind"] == "work_item_wait_committed"]
    assert len(committed) == 1
    a.update_state(lambda s: setattr(s, "active_task_ids", []))  # the task's result arrived
    assert workitems.scheduling_state(stored, workitems.wait_facts(agent, [])) == "runnable"
    out = closure.turn_outcome(a, _ts())  # the turn it wakes continues the item
    assert out.work_signal and out.work_signal["reactivation_mode"] == "continue_active"
    assert workitems.get(agent, rec["id"])["wait"] is None


def test_resting_on_an_external_trigger_makes_the_item_waiting_external(agent):
    """Spec, Work-Item Persistence Foundation: active external waits give `waiting_external`;
    the trigger's next delivery ends the wait (the item is runnable again)."""
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Await review"))
    a.update_state(lambda s: setattr(s, "bound_work_item_id", rec["id"]))
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    _, token = triggers.rotate(agent)
    out = closure.turn_outcome(a, _ts(_result("0:s", effects={"sleep": {"reason": "review"}})))
    assert out.waiting_reason == "awaiting_external_change"
    stored = workitems.get(agent, rec["id"])
    assert stored["wait"]["kind"] == "external"
    assert workitems.scheduling_state(stored, workitems.wait_facts(agent, [])) == (
        "waiting_external"
    )
    triggers.deliver(token, source="ci")  # the external change arrived
    assert workitems.scheduling_state(stored, workitems.wait_facts(agent, [])) == "runnable"


def test_message_built_by_admission_resolves_like_its_kind(agent):
    record = admission.admit(
        agent, "task", "task_result", admission.text_body("exit 0"), task_id="tsk_1"
    )
    out = resolve_continuation(
        {"outcome": "waiting", "waiting_reason": "awaiting_task_result"},
        MessageEnvelope.model_validate(record),
    )
    assert out["mode"] == "resume_expected_wait" and out["evidence"][1] == "origin:task"


def test_a_turn_that_waits_on_its_operator_leaves_an_action_required_brief(agent, script):
    """Spec, Brief Output Contract: a brief emitted while the agent awaits operator input is
    action_required; its audit event carries the same visibility for the feed and the hook."""
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Deploy"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    model = script(
        {
            "text": "",
            "tool_calls": [
                {
                    "name": "UpdateWorkItem",
                    "arguments": {"work_item_id": rec["id"], "plan_status": "needs_input"},
                }
            ],
        },
        {"text": "Which region should I deploy to?"},
    )
    _prompt(agent, "deploy it")
    tick(agent, model=model)
    (brief,) = [b for b in jsonl.read(agent.briefs) if b["kind"] == "result"]
    assert brief["visibility"] == "action_required"
    assert brief["text"] == "Which region should I deploy to?"
    (event,) = [e for e in jsonl.read(agent.events) if e["kind"] == "brief_recorded"]
    assert event["data"]["visibility"] == "action_required"
    assert event["data"]["brief_id"] == brief["id"] and event["data"]["work_item_id"] == rec["id"]
    assert a.state().closure["waiting_reason"] == "awaiting_operator_input"

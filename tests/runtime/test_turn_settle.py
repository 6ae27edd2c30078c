"""holon.runtime.turn.settle: effects applied once (the `sleep` timer), briefs, failures."""

from __future__ import annotations

import pytest
from scenario_helpers import T0, set_now

from holon import clock
from holon.agent import admission, timers
from holon.agent.handle import Agent
from holon.model.conversation import ProviderFailure
from holon.model.messages import MessageEnvelope
from holon.model.records import AgentStatus
from holon.runtime.tick import tick
from holon.runtime.turn import settle
from holon.runtime.turn.state import begin
from holon.store import jsonl
from holon.tools.base import SleepEffect, ToolEffects


def _prompt(home, text: str = "go") -> dict:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def _sleep_call(**arguments) -> dict:
    return {"name": "Sleep", "arguments": arguments}


def _sleep_timer(home) -> dict | None:
    return next((t for t in timers.load(home) if t["id"] == settle.SLEEP_TIMER_ID), None)


# -- failure_artifact ----------------------------------------------------------------------------


def test_failure_artifact_without_attempts():
    failure = ProviderFailure("max_rounds_exceeded", "stopped after 3 rounds", category="runtime")
    art = settle.failure_artifact(failure, None)
    assert art.summary == "turn failed: the turn hit its round limit: stopped after 3 rounds"
    assert (art.category, art.kind, art.model_ref) == ("runtime", "max_rounds_exceeded", None)


def test_failure_artifact_names_the_last_attempt_and_maps_unknown_categories():
    failure = ProviderFailure("server_error", "boom", status=503, category="weird")
    timeline = {
        "attempts": [
            {"provider": "openai", "model_ref": "openai/a"},
            {"provider": "anthropic", "model_ref": "anthropic/b"},
        ]
    }
    art = settle.failure_artifact(failure, timeline)
    assert art.summary == (
        "provider request failed after 2 attempt(s): server error (anthropic/b): boom"
    )
    assert (art.category, art.provider, art.model_ref, art.status) == (
        "unknown",
        "anthropic",
        "anthropic/b",
        503,
    )


# -- apply_effects -------------------------------------------------------------------------------


def test_apply_effects_sleep_timer_is_created_replaced_and_cancelled(agent, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    settle.apply_effects(a, ToolEffects())  # nothing asked, nothing done
    assert timers.load(agent) == []
    settle.apply_effects(
        a,
        ToolEffects(
            sleep=SleepEffect(until=clock.iso(T0 + 600), duration_ms=600_000, reason="deploy")
        ),
    )
    timer = _sleep_timer(agent)
    assert timer["due_ts"] == pytest.approx(T0 + 600) and timer["source"] == "sleep"
    assert timer["text"] == "Sleep of 600000 ms ended. Reason: deploy"
    settle.apply_effects(
        a, ToolEffects(sleep=SleepEffect(until=clock.iso(T0 + 60), duration_ms=60_000))
    )
    assert [t["due_ts"] for t in timers.load(agent)] == [pytest.approx(T0 + 60)]
    assert _sleep_timer(agent)["text"] == "Sleep of 60000 ms ended."
    settle.apply_effects(a, ToolEffects())  # no sleep asked: the timer stays
    assert _sleep_timer(agent) is not None
    settle.apply_effects(a, ToolEffects(sleep=SleepEffect(reason="until woken")))
    assert timers.load(agent) == []
    settle.apply_effects(a, ToolEffects(sleep=SleepEffect()))  # nothing to cancel: no error
    assert timers.load(agent) == []


def test_other_timers_are_not_touched_by_sleep(agent, monkeypatch):
    set_now(monkeypatch, T0)
    other = timers.create(agent, every="1h", text="hourly")
    settle.apply_effects(Agent(agent), ToolEffects(sleep=SleepEffect()))
    assert [t["id"] for t in timers.load(agent)] == [other["id"]]


# -- settled turns -------------------------------------------------------------------------------


def test_a_later_sleep_in_the_turn_replaces_an_earlier_one(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    _prompt(agent)
    model = script(
        {
            "text": "",
            "tool_calls": [
                _sleep_call(duration_ms=600_000),
                _sleep_call(duration_ms=60_000, reason="sooner"),
            ],
        },
        {"text": "Sleeping."},
    )
    assert tick(agent, model=model).turns[0]["status"] == "completed"
    assert [(t["id"], t["due_ts"]) for t in timers.load(agent)] == [("sleep", T0 + 60)]
    state = Agent(agent).state()
    assert state.status == AgentStatus.asleep and state.sleeping_until == clock.iso(T0 + 60)
    assert state.closure["outcome"] == "waiting"
    assert state.closure["waiting_reason"] == "awaiting_timer"
    assert float(agent.next_due.read_text()) == pytest.approx(T0 + 60)


def test_sleep_without_duration_cancels_a_pending_sleep_timer(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    model = script(
        {"tool_calls": [_sleep_call(duration_ms=600_000)]},
        {"text": "Later."},
        {"tool_calls": [_sleep_call(reason="until the operator writes")]},
        {"text": "Resting."},
    )
    _prompt(agent, "first")
    tick(agent, model=model)
    assert _sleep_timer(agent) is not None
    _prompt(agent, "second")
    tick(agent, model=model)
    assert timers.load(agent) == [] and not agent.next_due.exists()
    state = Agent(agent).state()
    assert state.status == AgentStatus.asleep and state.sleeping_until is None
    assert state.closure["outcome"] == "completed"
    assert state.closure["runtime_posture"] == "asleep"


def test_a_failed_sleep_call_has_no_effect(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    _prompt(agent)
    model = script({"tool_calls": [_sleep_call(duration_ms=-5)]}, {"text": "Oops."})
    tick(agent, model=model)
    (result,) = [e["data"] for e in jsonl.read(agent.transcript) if e["kind"] == "tool_result"]
    assert result["status"] == "error" and "effects" not in result
    assert timers.load(agent) == []
    assert Agent(agent).state().status == AgentStatus.awake_idle


def test_settle_success_is_idempotent_on_resume(agent, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    msg = MessageEnvelope.model_validate(_prompt(agent))
    ts = begin(a, msg)
    ts.rounds = [{"text": "Resting now.", "tool_calls": []}]
    ts.results = {
        "0:c": {
            "key": "0:c",
            "status": "success",
            "effects": {"sleep": {"until": clock.iso(T0 + 120), "duration_ms": 120_000}},
        }
    }
    first = settle.settle_success(a, ts)
    assert first.status == "completed" and first.final_text == "Resting now."
    assert first.brief["visibility"] == "turn_result" and _sleep_timer(agent) is not None
    timers.cancel(agent, "sleep")
    state = a.state()
    assert state.turn_index == 1 and state.total_message_count == 1
    again = settle.settle_success(a, ts, already=True)
    assert again.status == "completed" and again.turn_id == first.turn_id
    assert _sleep_timer(agent) is None  # effects of a settled turn are not applied again
    state = a.state()
    assert state.turn_index == 1 and state.total_message_count == 1
    assert len(list(jsonl.read(agent.briefs))) == 1


def test_settle_failure_records_the_failure_everywhere(agent):
    a = Agent(agent)
    msg = MessageEnvelope.model_validate(_prompt(agent))
    ts = begin(a, msg)
    failure = ProviderFailure("budget_exhausted", "turn token budget spent", category="runtime")
    result = settle.settle_failure(a, ts, failure, None)
    assert result.status == "failed"
    summary = "turn failed: a token budget is spent: turn token budget spent"
    assert result.failure_artifact["summary"] == summary
    kinds = [e["kind"] for e in jsonl.read(agent.transcript)]
    assert kinds == ["message", "runtime_failure", "brief", "turn_terminal"]
    terminal = [e for e in jsonl.read(agent.transcript) if e["kind"] == "turn_terminal"][0]
    assert terminal["data"]["kind"] == "aborted"
    error = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "runtime_error"][0]
    assert error["failure_kind"] == "budget_exhausted" and error["error"] == summary
    (brief,) = list(jsonl.read(agent.briefs))
    assert brief["kind"] == "failure" and brief["text"] == summary
    state = a.state()
    assert state.closure["outcome"] == "failed" and state.inflight == {}
    assert state.last_turn.kind == "aborted" and state.last_turn.message_id == msg.id

"""holon.runtime.turn.loop: rounds, tool calls with intents, limits and failures, settled once."""

from __future__ import annotations

from holon.agent import admission, budget
from holon.agent.handle import Agent
from holon.model.conversation import ProviderFailure
from holon.model.messages import MessageEnvelope
from holon.runtime.turn import loop
from holon.runtime.turn.stops import BudgetExhausted, RoundLimit, ScriptExhausted, TurnStop
from holon.store import jsonl


def _message(home, text: str = "hello") -> MessageEnvelope:
    record = admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))
    return MessageEnvelope.model_validate(record)


def _kinds(home) -> list[str]:
    return [e["kind"] for e in jsonl.read(home.transcript)]


def test_a_round_with_calls_records_intent_then_result_then_asks_again(agent, script):
    model = script(
        {
            "text": "Looking.",
            "tool_calls": [
                {"name": "ListWorkItems", "arguments": {}},
                {"name": "NoSuchTool", "arguments": {"x": 1}},
            ],
            "usage": {"input_tokens": 10, "output_tokens": 4},
        },
        {"text": "Nothing queued.", "usage": {"input_tokens": 20, "output_tokens": 5}},
    )
    msg = _message(agent)
    result = loop.run(Agent(agent), msg, model=model)
    assert result.status == "completed" and result.final_text == "Nothing queued."
    assert result.rounds == 2 and result.token_usage["total_tokens"] == 39
    entries = list(jsonl.read(agent.transcript))
    kinds = [e["kind"] for e in entries]
    assert kinds == [
        "message",
        "turn_context",
        "assistant_round",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "assistant_round",
        "brief",
        "turn_terminal",
    ]
    intents = [e["data"] for e in entries if e["kind"] == "tool_call"]
    assert [(i["key"], i["name"], i["round_index"]) for i in intents] == [
        ("0:call_s0_0", "ListWorkItems", 0),
        ("0:call_s0_1", "NoSuchTool", 0),
    ]
    results = [e["data"] for e in entries if e["kind"] == "tool_result"]
    assert [r["status"] for r in results] == ["success", "error"]
    assert results[1]["envelope"]["error"]["kind"] == "unknown_tool"
    assert all("effects" not in r for r in results)
    executed = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "tool_executed"]
    assert [e["status"] for e in executed] == ["success", "error"]
    assert executed[1]["tool_error"]["kind"] == "unknown_tool"
    assert {e["turn_id"] for e in entries} == {result.turn_id}
    assert result.extra["raw_final_text"] == "Nothing queued."


def test_without_a_model_the_turn_fails_clearly(agent):
    msg = _message(agent)
    result = loop.run(Agent(agent), msg)
    assert result.status == "failed"
    assert result.failure_artifact["kind"] == "no_model_configured"
    assert result.failure_artifact["category"] == "runtime"
    assert _kinds(agent) == ["message", "runtime_failure", "brief", "turn_terminal"]
    state = Agent(agent).state()
    assert state.closure["outcome"] == "failed" and state.inflight == {}
    assert state.last_turn.kind == "aborted"


def test_round_limit_stops_a_turn_that_never_finishes(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_MAX_ROUNDS", "2")
    rounds = [{"tool_calls": [{"name": "ListWorkItems", "arguments": {}}]}] * 3
    result = loop.run(Agent(agent), _message(agent), model=script(*rounds))
    assert result.status == "failed" and result.rounds == 2
    assert result.failure_artifact["kind"] == "max_rounds_exceeded"
    assert "round limit" in result.failure_artifact["summary"]
    # both rounds' calls ran before the limit was checked
    assert _kinds(agent).count("tool_result") == 2


def test_turn_budget_refuses_the_next_request(agent, script):
    budget.set_limits(Agent(agent), turn_tokens=10)
    model = script(
        {
            "tool_calls": [{"name": "ListWorkItems", "arguments": {}}],
            "usage": {"input_tokens": 8, "output_tokens": 4},
        },
        {"text": "never served"},
    )
    result = loop.run(Agent(agent), _message(agent), model=model)
    assert result.status == "failed" and result.failure_artifact["kind"] == "budget_exhausted"
    assert result.token_usage["total_tokens"] == 12
    assert Agent(agent).state().token_usage.total.total_tokens == 12


def test_the_loops_stops_are_its_own_not_provider_failures():
    for stop, kind in (
        (RoundLimit, "max_rounds_exceeded"),
        (BudgetExhausted, "budget_exhausted"),
        (ScriptExhausted, "script_exhausted"),
    ):
        raised = stop("stopped")
        assert isinstance(raised, TurnStop) and not isinstance(raised, ProviderFailure)
        assert (raised.kind, raised.category, raised.message) == (kind, "runtime", "stopped")


def test_an_exhausted_script_stops_the_turn_with_its_timeline(agent, script):
    model = script({"tool_calls": [{"name": "ListWorkItems", "arguments": {}}]})
    result = loop.run(Agent(agent), _message(agent), model=model, queue_file="m.json")
    assert result.status == "failed" and not result.dead_letter
    assert result.failure_artifact["kind"] == "script_exhausted"
    assert result.failure_artifact["category"] == "runtime"
    attempts = result.provider_attempt_timeline["attempts"]
    assert attempts[-1]["failure_kind"] == "script_exhausted"


def test_provider_error_settles_as_failure_with_its_timeline(agent, script):
    model = script({"error": {"status": 400, "kind": "invalid_request", "message": "bad"}})
    result = loop.run(Agent(agent), _message(agent), model=model)
    assert result.status == "failed" and result.failure_artifact["kind"] == "invalid_request"
    attempts = result.provider_attempt_timeline["attempts"]
    assert len(attempts) == 1 and attempts[0]["model_ref"] == model
    briefs = list(jsonl.read(agent.briefs))
    assert briefs[-1]["kind"] == "failure"
    assert briefs[-1]["text"] == result.failure_artifact["summary"]


def test_max_rounds_reads_the_environment(monkeypatch):
    assert loop.max_rounds() == loop.DEFAULT_MAX_ROUNDS
    monkeypatch.setenv("HOLON_MAX_ROUNDS", "7")
    assert loop.max_rounds() == 7

"""holon.runtime.turn.state: a turn begins marked inflight and resumes from the transcript."""

from __future__ import annotations

import json

from helpers import REPO, run, subprocess_env

from holon.agent import admission
from holon.agent.handle import Agent
from holon.model.messages import MessageEnvelope
from holon.runtime.tick import tick
from holon.runtime.turn import loop
from holon.runtime.turn.state import TurnState, begin, call_key
from holon.store import jsonl


def _message(home, text: str = "hello") -> MessageEnvelope:
    record = admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))
    return MessageEnvelope.model_validate(record)


def _entries(home, kind: str | None = None) -> list[dict]:
    return [e for e in jsonl.read(home.transcript) if kind is None or e["kind"] == kind]


def test_begin_marks_the_turn_inflight_and_records_the_message(agent):
    Agent(agent).transcript("note", text="before")  # the offset points past older entries
    offset = agent.transcript.stat().st_size
    msg = _message(agent, "do the thing")
    ts = begin(Agent(agent), msg)
    assert ts.turn_id.startswith("turn_") and not ts.resumed and ts.rounds == []
    inflight = Agent(agent).state().inflight[msg.id]
    assert inflight["turn_id"] == ts.turn_id and inflight["transcript_offset"] == offset
    (entry,) = _entries(agent, "message")
    assert entry["turn_id"] == ts.turn_id and entry["message_id"] == msg.id
    data = entry["data"]
    assert (
        data["message_kind"],
        data["origin_kind"],
        data["trust"],
        data["authority_class"],
        data["delivery_surface"],
        data["text"],
        data["body_type"],
    ) == (
        "operator_prompt",
        "operator",
        "trusted_operator",
        "operator_instruction",
        "cli_prompt",
        "do the thing",
        "text",
    )
    assert ts.final_text == ""


def test_begin_again_resumes_from_the_transcript_of_its_own_turn(agent):
    a = Agent(agent)
    msg = _message(agent)
    ts = begin(a, msg)
    call = {"id": "c1", "name": "ListWorkItems", "arguments": {}}
    a.transcript(
        "assistant_round", turn_id="turn_other", round_index=0, text="not mine", tool_calls=[]
    )
    a.transcript(
        "assistant_round",
        turn_id=ts.turn_id,
        message_id=msg.id,
        round_index=0,
        text="working",
        tool_calls=[call, {**call, "id": "c2"}],
        token_usage={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9},
        provider_attempt_timeline={"attempts": [{"outcome": "succeeded"}]},
    )
    for cid in ("c1", "c2"):
        a.transcript("tool_call", turn_id=ts.turn_id, key=call_key(0, cid), call_id=cid)
    a.transcript("tool_result", turn_id=ts.turn_id, key="0:c1", call_id="c1", status="success")

    resumed = begin(a, msg)
    assert resumed.resumed and resumed.turn_id == ts.turn_id and not resumed.settled
    assert [r["text"] for r in resumed.rounds] == ["working"]
    assert resumed.final_text == "working"
    assert set(resumed.intents) == {"0:c1", "0:c2"} and set(resumed.results) == {"0:c1"}
    assert resumed.usage.total_tokens == 9 and resumed.timelines == [
        {"attempts": [{"outcome": "succeeded"}]}
    ]
    assert len(_entries(agent, "message")) == 1  # a resumed turn records no second message
    event = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "turn_resumed"][-1]
    assert event == {
        "message_id": msg.id,
        "turn_id": ts.turn_id,
        "rounds": 1,
        "tool_results": 1,
        "interrupted_calls": 1,
    }


def test_a_turn_with_a_terminal_resumes_as_settled_and_is_not_settled_twice(agent, script):
    msg = _message(agent, "once")
    report = tick(agent, model=script({"text": "only once"}))
    turn = report.turns[0]
    state = Agent(agent).state()
    assert state.inflight == {} and state.turn_index == 1
    # a crash after the terminal but before the queue file was removed: the marker is still there
    Agent(agent).update_state(
        lambda s: s.inflight.update({msg.id: {"turn_id": turn["turn_id"], "transcript_offset": 0}})
    )
    ts = begin(Agent(agent), msg)
    assert ts.settled and ts.brief["text"] == "only once"
    result = loop.run(Agent(agent), msg, model=script({"text": "never asked"}, name="s2.jsonl"))
    assert result.status == "completed" and result.final_text == "only once"
    assert result.turn_id == turn["turn_id"]
    state = Agent(agent).state()
    assert state.inflight == {} and state.turn_index == 1
    assert len([b for b in jsonl.read(agent.briefs) if b["kind"] == "result"]) == 1
    assert len(_entries(agent, "turn_terminal")) == 1


def test_crashed_turn_resumes_without_repeating_done_calls(agent, script, tmp_path):
    """A tick killed inside a tool call: the next tick resumes the same turn; the call that finished
    is not run again and the one that was running is reported as tool_interrupted."""
    fx = tmp_path / "sidefx"
    model = script(
        {
            "text": "Two steps.",
            "tool_calls": [
                {"name": "AppendLine", "arguments": {"line": "once"}},
                {"name": "Crash", "arguments": {}},
            ],
        },
        {"text": "Recovered after the crash."},
    )
    env = subprocess_env(
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine,plugins.sidefx:Crash",
        SIDEFX_FILE=str(fx),
        HOLON_MODEL=model,
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
    )
    msg = _message(agent, "go")
    assert run("tick", "a", env=env).returncode == -9  # SIGKILLed by the Crash tool
    assert agent.queue.in_progress() and msg.id in Agent(agent).state().inflight

    report = tick(agent, model=model)
    assert report.recovered == [msg.id]
    assert report.turns[0]["final_text"] == "Recovered after the crash."
    assert len(fx.read_text().splitlines()) == 1  # AppendLine ran once
    kinds = [e["kind"] for e in _entries(agent)]
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
    results = [e["data"] for e in _entries(agent, "tool_result")]
    assert [(r["tool_name"], r["status"]) for r in results] == [
        ("AppendLine", "success"),
        ("Crash", "error"),
    ]
    error = results[1]["envelope"]["error"]
    assert error["kind"] == "tool_interrupted" and error["retryable"] is True
    assert "tool_interrupted" in results[1]["rendered"]
    assert len({e["turn_id"] for e in _entries(agent)}) == 1
    (resumed,) = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "turn_resumed"]
    assert (resumed["rounds"], resumed["tool_results"], resumed["interrupted_calls"]) == (1, 1, 1)
    state = Agent(agent).state()
    assert state.inflight == {} and state.turn_index == 1
    assert json.loads(agent.scripted_cursor.read_text()) == {model.split("/", 1)[1]: 2}


def test_turn_state_final_text_is_the_last_round():
    ts = TurnState(turn_id="turn_x", message=None)  # type: ignore[arg-type]
    ts.rounds = [{"text": "first"}, {"text": "second"}]
    assert ts.final_text == "second" and call_key(3, "abc") == "3:abc"

"""holon.runtime.turn.summaries: the opt-in model-written episode summary, end to end with the
scripted provider: written once after the settle that closes an episode, shown in the episode
block and replayed from the record (no second call), off by default, a failure keeps the
deterministic summary, and a crash between the call and its record calls once more at most."""

from __future__ import annotations

import json

import pytest
from helpers import run, subprocess_env

from holon.agent import admission
from holon.agent.handle import Agent
from holon.context import summaries
from holon.home.layout import Home
from holon.memory import index
from holon.runtime.tick import tick
from holon.runtime.turn import summaries as writer
from holon.store import jsonl

SLEEP = {"text": "Resting.", "tool_calls": [{"name": "Sleep", "arguments": {"reason": "done"}}]}
ASLEEP = {"text": "Sleeping now."}
WRITTEN = "Operator asked to rest; the agent chose the heliotrope plan and went to sleep."
SUMMARY = {"text": WRITTEN, "usage": {"input_tokens": 300, "output_tokens": 40}}


def _sleep_turn(home: Home, model: str, ask: str = "rest for now") -> None:
    admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(ask))
    tick(home, model=model)


def _served(home: Home) -> int:
    """Scripted rounds consumed so far (every line served advances the cursor once)."""
    data = json.loads(home.scripted_cursor.read_text())
    (count,) = data.values()
    return count


def _lines(home: Home) -> list[dict]:
    path = home.context_summaries
    return list(jsonl.read(path)) if path.exists() else []


def _events(home: Home, kind: str) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == kind]


def _episodes(home: Home) -> list[dict]:
    return list(jsonl.read(home.context_episodes))


def test_off_by_default_no_call_and_no_record(agent, script):
    model = script(SLEEP, ASLEEP, SUMMARY)
    _sleep_turn(agent, model)
    (ep,) = _episodes(agent)
    assert ep["summary_source"] == "deterministic"
    assert _served(agent) == 2  # the summary round was never asked for
    assert _lines(agent) == [] and Agent(agent).state().context.summaries_pending == []
    assert json.loads(agent.settings_json.read_text())["model_summaries"] is False


@pytest.mark.slow
def test_a_summary_is_recorded_once_and_replayed_without_a_call(agent, script):
    model = script(SLEEP, ASLEEP, SUMMARY)
    proc = run("model", "summaries", "a", "on", "--json", env=subprocess_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model_summaries"] is True
    settings = json.loads(agent.settings_json.read_text())
    assert settings["model_summaries"] is True  # the operator's choice, kept in git
    a = Agent(agent)
    before = a.state().token_usage_by_day
    _sleep_turn(agent, model)
    assert _served(agent) == 3
    (ep,) = _episodes(agent)
    (line,) = _lines(agent)[1:]  # after its attempt
    assert _lines(agent)[0]["kind"] == "attempt"
    assert line["kind"] == "summary" and line["episode_id"] == ep["id"]
    assert (line["summary"], line["summary_source"], line["model_ref"]) == (WRITTEN, "model", model)
    assert line["input_digest"] == summaries.digest(summaries.prompt_input(ep))
    assert line["usage"]["total_tokens"] == 340
    (event,) = _events(agent, "episode_summary_recorded")
    assert event["episode_id"] == ep["id"] and event["input_digest"] == line["input_digest"]
    state = Agent(agent).state()
    assert state.context.summaries_pending == []
    assert sum(state.token_usage_by_day.values()) == sum(before.values()) + 340
    # the next request, with the episode folded out of the window, shows the recorded text
    Agent(agent).update_state(
        lambda s: setattr(s.context, "window_start", ep["transcript"]["end_offset"])
    )
    first = run("debug", "prompt", "a", "--json", "--model", model, env=subprocess_env())
    second = run("debug", "prompt", "a", "--json", "--model", model, env=subprocess_env())
    assert first.returncode == 0, first.stderr
    blocks = json.loads(first.stdout)["request"]["context_blocks"]
    (block,) = [b["text"] for b in blocks if b["name"] == "episodes"]
    assert WRITTEN in block and f"summary written by {model}" in block
    assert "Sleeping now." not in block  # the deterministic summary gives way to the model's
    assert first.stdout == second.stdout and _served(agent) == 3  # replayed, never called again
    found = index.search(agent, "heliotrope plan", limit=5)["results"]
    assert any(r["title"].startswith("episode summary by") for r in found)


def test_a_provider_failure_keeps_the_deterministic_summary(agent, script):
    failing = {"error": {"status": 400, "kind": "invalid_request", "message": "no"}}
    model = script(SLEEP, ASLEEP, failing)
    summaries.set_enabled(Agent(agent), True)
    _sleep_turn(agent, model)
    a = Agent(agent)
    assert a.state().last_turn.kind == "completed"  # the turn is not failed by it
    (ep,) = _episodes(agent)
    assert ep["summary_source"] == "deterministic" and "Sleeping now." in ep["summary"]
    assert [r["kind"] for r in _lines(agent)] == ["attempt"]
    (event,) = _events(agent, "episode_summary_failed")
    assert (event["episode_id"], event["reason"], event["kept"]) == (
        ep["id"],
        "invalid_request",
        "deterministic",
    )
    assert a.state().context.summaries_pending == []


def test_a_spent_budget_keeps_the_deterministic_summary(agent, script, monkeypatch):
    model = script(SLEEP, ASLEEP, SUMMARY)
    summaries.set_enabled(Agent(agent), True)
    calls = []

    def spent(agent, usage):
        calls.append(usage)
        if len(calls) > 2:  # the turn's two rounds pass; the summary's check finds it spent
            raise writer.budget.Exhausted("daily token budget spent", {"budget": "daily_tokens"})

    monkeypatch.setattr(writer.budget, "check", spent)  # the module the turn loop checks too
    _sleep_turn(agent, model)
    assert _served(agent) == 2 and _lines(agent) == []
    (event,) = _events(agent, "episode_summary_failed")
    assert event["reason"] == "budget"


@pytest.mark.slow
def test_a_crash_after_the_call_calls_once_more_and_records_one_summary(agent, script):
    model = script(SLEEP, ASLEEP, SUMMARY, {"text": "Again."}, SUMMARY, SLEEP, ASLEEP)
    summaries.set_enabled(Agent(agent), True)
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("rest"))
    env = subprocess_env(HOLON_MODEL=model, HOLON_CRASH_AT="summary.record:1")
    assert run("tick", "a", env=env).returncode == -9  # killed after the call, before the record
    assert _served(agent) == 3 and [r["kind"] for r in _lines(agent)] == ["attempt"]
    assert len(Agent(agent).state().context.summaries_pending) == 1
    # the next settle calls once more and records it
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("again"))
    env = subprocess_env(HOLON_MODEL=model)
    assert run("tick", "a", env=env).returncode == 0
    assert _served(agent) == 5  # the turn's round, then the one retry
    assert [r["kind"] for r in _lines(agent)] == ["attempt", "attempt", "summary"]
    assert Agent(agent).state().context.summaries_pending == []
    # and never again for that episode: a later settle calls only for a new one
    _sleep_turn(agent, model, "rest again")
    assert _served(agent) == 7 and len(_episodes(agent)) == 2
    assert [r["kind"] for r in _lines(agent)].count("summary") == 1


def test_a_second_crash_gives_up_on_the_episode(agent, script):
    model = script(SLEEP, ASLEEP, SUMMARY)
    a = Agent(agent)
    summaries.set_enabled(a, True)
    _sleep_turn(agent, model)
    (ep,) = _episodes(agent)
    # as if two calls had been made and lost: the queue holds it, two attempts are logged
    path = a.home.context_summaries
    path.write_text("".join(json.dumps(r) + "\n" for r in _lines(agent)[:1] * 2))
    a.update_state(lambda s: setattr(s.context, "summaries_pending", [ep["id"]]))
    writer.run_pending(Agent(agent), model, "turn_x")
    assert _served(agent) == 3  # no third call
    (event,) = _events(agent, "episode_summary_failed")
    assert event["reason"] == "interrupted"
    assert Agent(agent).state().context.summaries_pending == []


def test_a_crash_after_the_record_never_calls_again(agent, script):
    model = script(SLEEP, ASLEEP, SUMMARY, SUMMARY)
    a = Agent(agent)
    summaries.set_enabled(a, True)
    _sleep_turn(agent, model)
    (ep,) = _episodes(agent)
    # as if killed after the summary line and before the state left the queue
    a.update_state(lambda s: setattr(s.context, "summaries_pending", [ep["id"]]))
    writer.run_pending(Agent(agent), model, "turn_x")
    assert _served(agent) == 3 and [r["kind"] for r in _lines(agent)] == ["attempt", "summary"]
    assert Agent(agent).state().context.summaries_pending == []
    assert _events(agent, "episode_summary_failed") == []

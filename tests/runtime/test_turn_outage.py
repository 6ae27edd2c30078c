"""Provider outages in the tick: a retryable failure defers the message (not-before, backoff,
retry-after) and the turn resumes without repeating its tool calls; permanent failures and the
retry limit dead-letter it with a brief that says how to run it again."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T0, set_now

from holon.agent import admission, due, nextdue
from holon.context import history
from holon.errors import UsageError
from holon.model.conversation import ProviderFailure
from holon.runtime.tick import tick
from holon.runtime.turn import fate, outage
from holon.store import jsonl
from holon.store.queue import not_before_of

DOWN = {"error": {"status": 503, "message": "upstream unavailable"}}
REFUSED = {"error": {"kind": "connection", "message": "connection refused"}}


def down(times: int = 1, last: dict | None = None) -> list[dict]:
    """What a provider that is down answers to one round: every in-turn attempt fails."""
    rounds = [DOWN] * (3 * times)
    if last is not None:
        rounds[-1] = last
    return rounds


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    monkeypatch.setenv("HOLON_RETRY_BASE_S", "10")
    monkeypatch.setenv("HOLON_RETRY_MAX_S", "40")
    set_now(monkeypatch, T0)


def _prompt(home, text: str) -> dict:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def _events(home, kind: str) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == kind]


def _entries(home, kind: str) -> list[dict]:
    return [e for e in jsonl.read(home.transcript) if e["kind"] == kind]


def _not_before(home) -> float:
    ((_, at),) = home.queue.deferred(now=0)
    return at


def test_classification_and_backoff(monkeypatch):
    def failure(kind: str) -> ProviderFailure:
        return ProviderFailure(kind, "x")

    for kind in ("timeout", "connection", "rate_limited", "server_error"):
        assert outage.disposition(failure(kind)) == "defer"
    for kind in ("auth", "client_error", "missing_credentials", "no_model_configured"):
        assert outage.disposition(failure(kind)) == "dead_letter"
    # the turn's own stops (budget, round limit, script) are not provider failures: stops.py
    assert outage.disposition(failure("context_length_exceeded")) == "fail"
    for retry, (low, high) in {1: (5, 10), 2: (10, 20), 3: (20, 40), 9: (20, 40)}.items():
        delays = [fate.backoff_s(retry) for _ in range(50)]
        assert low <= min(delays) and max(delays) <= high, retry
    assert fate.backoff_s(1, retry_after_s=90) == 90  # the provider asked for longer
    assert fate.backoff_s(3, retry_after_s=1) >= 20
    monkeypatch.setenv("HOLON_RETRY_BASE_S", "soon")
    with pytest.raises(UsageError) as err:
        fate.backoff_s(1)
    assert err.value.kind == "invalid_config" and "HOLON_RETRY_BASE_S" in err.value.message


def _tick_at(monkeypatch, home, at: float):
    set_now(monkeypatch, at)
    return tick(home)


def test_an_outage_defers_the_message_and_the_turn_resumes_once_it_is_over(
    agent, script, tmp_path, monkeypatch
):
    fx = tmp_path / "fx"
    write = {"cmd": f"echo once >> {fx}", "login": False}
    model = script(
        {"text": "writing", "tool_calls": [{"name": "ExecCommand", "arguments": write}]},
        *down(),  # 5xx on every in-turn attempt
        *down(last=REFUSED),
        *down(last={"error": {"status": 429, "retry_after_s": 100}}),
        {"text": "all done"},
    )
    env = admission.admit(
        agent, "cli_prompt", "operator_prompt", admission.text_body("go"), model_ref=model
    )
    report = tick(agent)
    (turn,) = report.turns
    assert (turn["status"], turn["provider_retries"]) == ("deferred", 1)
    assert report.deferred[0]["failure_kind"] == "server_error"
    assert report.dead_lettered == [] and list(jsonl.read(agent.briefs)) == []
    first = _not_before(agent)
    assert T0 + 5 <= first <= T0 + 10.001
    (name,) = agent.queue.pending()
    record = json.loads((agent.queue.new / name).read_text())
    assert (record["provider_retries"], record["model_ref"]) == (1, model)
    assert record["not_before"] == turn["not_before"]

    # not before its time: the idle check is idle, a tick claims nothing, next_due says when
    assert due.due_reasons(agent) == [] and tick(agent).turns == []
    assert nextdue.read(agent) == pytest.approx(first, abs=0.001)
    assert _tick_at(monkeypatch, agent, first - 0.01).turns == []
    set_now(monkeypatch, first)
    assert "queued_messages" in due.due_reasons(agent)

    second = tick(agent)  # connection refused this time
    assert second.turns[0]["status"] == "deferred" and second.deferred[0]["provider_retries"] == 2
    later = _not_before(agent)
    assert first + 10 <= later <= first + 20.001
    third = _tick_at(monkeypatch, agent, later)  # a 429 that asks for 100 s
    assert third.deferred[0]["failure_kind"] == "rate_limited"
    assert _not_before(agent) == pytest.approx(later + 100, abs=0.001)

    done = _tick_at(monkeypatch, agent, later + 100)
    assert [(t["message_id"], t["status"], t["final_text"]) for t in done.turns] == [
        (env["id"], "completed", "all done")
    ]
    assert fx.read_text() == "once\n"  # the tool call of the interrupted turn ran once
    assert [m["message_id"] for m in _entries(agent, "message")] == [env["id"]]
    assert len(_entries(agent, "tool_result")) == 1 and len(_entries(agent, "turn_terminal")) == 1
    assert [b["kind"] for b in jsonl.read(agent.briefs)] == ["result"]
    assert agent.queue.depth() == 0 and agent.queue.dead_letters() == []
    assert [d["provider_retries"] for d in _events(agent, "message_deferred")] == [1, 2, 3]
    assert nextdue.read(agent) is None and due.due_reasons(agent) == []


def test_other_messages_run_meanwhile_and_the_resumed_turn_gets_its_own_segment(
    agent, script, monkeypatch
):
    look = {"cmd": "true", "login": False}
    model = script(
        {"text": "step one", "tool_calls": [{"name": "ExecCommand", "arguments": look}]},
        *down(),
        {"text": "answer to b"},
        {"text": "a is done"},
    )
    monkeypatch.setenv("HOLON_MODEL", model)
    a = _prompt(agent, "a")
    assert tick(agent).turns[0]["status"] == "deferred"
    b = _prompt(agent, "b")
    ran = tick(agent, until_idle=True)  # b runs; a waits for its time
    assert [(t["message_id"], t["final_text"]) for t in ran.turns] == [(b["id"], "answer to b")]
    resumed = _tick_at(monkeypatch, agent, _not_before(agent))
    assert [(t["message_id"], t["final_text"]) for t in resumed.turns] == [(a["id"], "a is done")]
    messages = _entries(agent, "message")
    assert [m["message_id"] for m in messages] == [a["id"], b["id"], a["id"]]
    assert [m["data"].get("continued") for m in messages] == [None, None, True]
    assert messages[0]["turn_id"] == messages[2]["turn_id"]
    # every stretch of the transcript replays as one turn
    for turn in history.read_turns(agent.transcript, 0):
        assert {e["turn_id"] for e in turn.entries if e.get("turn_id")} == {turn.turn_id}
    results = [r for r in _entries(agent, "tool_result") if r["turn_id"] == messages[0]["turn_id"]]
    assert len(results) == 1
    assert [e["data"]["kind"] for e in _entries(agent, "turn_terminal")] == ["completed"] * 2


def test_the_retry_limit_dead_letters_with_a_brief_that_says_how_to_retry(
    agent, script, monkeypatch
):
    monkeypatch.setenv("HOLON_MAX_PROVIDER_RETRIES", "2")
    monkeypatch.setenv("HOLON_MODEL", script(*down(3)))
    env = _prompt(agent, "x")
    assert tick(agent).turns[0]["status"] == "deferred"
    assert _tick_at(monkeypatch, agent, _not_before(agent)).turns[0]["status"] == "deferred"
    report = _tick_at(monkeypatch, agent, _not_before(agent))
    assert report.turns[0]["status"] == "failed" and report.dead_lettered == [env["id"]]
    (name,) = agent.queue.dead_letters()
    assert not_before_of(name) is None and agent.queue.depth() == 0
    kept = json.loads((agent.queue.dead / name).read_text())
    assert (kept["id"], kept["provider_retries"], kept["not_before"]) == (env["id"], 0, None)
    (brief,) = jsonl.read(agent.briefs)
    assert brief["kind"] == "failure" and brief["related_message_id"] == env["id"]
    assert "stayed unavailable through 2 deferred retries" in brief["text"]
    assert f"mv {agent.queue.dead / name} {agent.queue.new}/" in brief["text"]
    (dead,) = _events(agent, "message_dead_lettered")
    assert "after 2 deferred retries" in dead["reason"]
    assert [e["data"]["kind"] for e in _entries(agent, "turn_terminal")] == ["aborted"]


@pytest.mark.parametrize(
    "line, why",
    [
        ({"error": {"status": 401}}, "refused the credentials for scripted"),
        ({"error": {"status": 400, "message": "model not found"}}, "rejected the request"),
    ],
)
def test_a_permanent_failure_dead_letters_at_once(agent, script, line, why):
    env = admission.admit(
        agent,
        "cli_prompt",
        "operator_prompt",
        admission.text_body("x"),
        model_ref=script(line, {"text": "never"}),
    )
    report = tick(agent)
    assert report.turns[0]["status"] == "failed" and report.dead_lettered == [env["id"]]
    assert report.deferred == [] and len(agent.queue.dead_letters()) == 1
    (brief,) = jsonl.read(agent.briefs)
    assert "This is not retried: the provider " + why in brief["text"]
    assert "move it back: `mv " in brief["text"]
    (attempt,) = report.turns[0]["provider_attempt_timeline"]["attempts"]  # not retried in turn


def test_no_model_at_turn_time_dead_letters_with_the_fix(agent):
    env = _prompt(agent, "x")  # admitted below the operator's checks
    report = tick(agent)
    assert report.dead_lettered == [env["id"]] and agent.queue.dead_letters()
    (brief,) = jsonl.read(agent.briefs)
    assert "no model is configured" in brief["text"] and "holon model set a" in brief["text"]


def test_a_bad_retry_setting_is_refused_before_anything_is_claimed(agent, script, monkeypatch):
    from holon.cli.main import main

    monkeypatch.setenv("HOLON_MODEL", script({"text": "x"}))
    _prompt(agent, "x")
    monkeypatch.setenv("HOLON_MAX_PROVIDER_RETRIES", "many")
    with pytest.raises(UsageError) as err:
        tick(agent)
    assert err.value.kind == "invalid_config"
    monkeypatch.setenv("HOLON_MAX_PROVIDER_RETRIES", "3")
    monkeypatch.setenv("HOLON_RETRY_MAX_S", "-1")
    assert main(["tick", "a"]) == 2
    assert len(agent.queue.pending()) == 1 and agent.queue.in_progress() == []


@pytest.mark.parametrize("damage", ["deleted", "corrupt"])
def test_a_lost_run_state_still_resumes_a_deferred_turn_without_repeating_its_calls(
    agent, script, tmp_path, monkeypatch, damage
):
    fx = tmp_path / "fx"
    write = {"cmd": f"echo once >> {fx}", "login": False}
    model = script(
        {"text": "writing", "tool_calls": [{"name": "ExecCommand", "arguments": write}]},
        *down(),
        {"text": "all done"},
    )
    admission.admit(
        agent, "cli_prompt", "operator_prompt", admission.text_body("go"), model_ref=model
    )
    assert tick(agent).turns[0]["status"] == "deferred"
    if damage == "deleted":
        agent.state_json.unlink()  # run state is volatile: git does not keep it
    else:
        agent.state_json.write_text("<<<<<<< HEAD\n{}\n")
    from holon.agent.handle import Agent

    assert list(Agent(agent).state().inflight)  # rebuilt: the turn is still in flight
    done = _tick_at(monkeypatch, agent, _not_before(agent))
    assert [t["status"] for t in done.turns] == ["completed"]
    assert fx.read_text() == "once\n"
    assert len(_entries(agent, "turn_terminal")) == 1

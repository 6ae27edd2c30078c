"""The model an operator chooses with `holon prompt --model` is remembered for the work that prompt
starts: a Sleep timer's wake, an Enqueue follow-up and a task_result run with it, through plain
`holon tick` (no --model, no default configured)."""

from __future__ import annotations

import json

from helpers import run, wait_for
from scenario_helpers import T0

from holon.store import jsonl


def _tick(env: dict[str, str] | None = None) -> dict:
    r = run("tick", "a", "--json", **({"env": env} if env else {}))
    assert r.returncode == 0, r.stderr
    (report,) = json.loads(r.stdout)["agents"]
    return report


def _envelopes(agent) -> dict[str, dict]:
    return {m["kind"]: m for m in jsonl.read(agent.messages)}


def test_a_sleep_timer_wakes_the_agent_with_the_prompts_model(agent, script, monkeypatch):
    model = script(
        {"text": "resting", "tool_calls": [{"name": "Sleep", "arguments": {"duration_ms": 60000}}]},
        {"text": "see you in a minute"},
        {"text": "awake again"},
    )
    monkeypatch.setenv("HOLON_NOW", str(T0))
    r = run("prompt", "a", "rest a minute", "--model", model)
    assert (r.returncode, r.stdout, r.stderr) == (0, "see you in a minute\n", "")  # nothing new
    assert _tick()["outcome"] == "idle"  # asleep until the timer
    monkeypatch.setenv("HOLON_NOW", str(T0 + 61))
    report = _tick()  # no --model and no default: the timer's message carries the model
    (turn,) = report["turns"]
    assert (turn["status"], turn["final_text"]) == ("completed", "awake again")
    assert turn["provider_attempt_timeline"]["winning_model_ref"] == model
    assert _envelopes(agent)["timer_tick"]["model_ref"] == model


def test_follow_ups_and_task_results_carry_the_model(agent, script, tmp_path):
    long_task = {"cmd": "sleep 1; echo late", "yield_time_ms": 50, "login": False}
    model = script(
        {
            "text": "starting",
            "tool_calls": [
                {"name": "ExecCommand", "arguments": long_task},
                {"name": "Enqueue", "arguments": {"text": "look again"}},
            ],
        },
        {"text": "started"},
        {"text": "looked again"},
        {"text": "the task is done"},
    )
    r = run("prompt", "a", "start it", "--no-wait", "--model", model)
    assert r.returncode == 0 and r.stderr == ""
    assert _tick()["turns"][0]["final_text"] == "started"  # the prompt carries its model
    followup = _envelopes(agent)["internal_followup"]
    assert followup["model_ref"] == model
    assert _tick()["turns"][0]["final_text"] == "looked again"
    wait_for(lambda: "task_result" in _envelopes(agent), timeout=20)
    assert _envelopes(agent)["task_result"]["model_ref"] == model
    (turn,) = _tick()["turns"]
    assert (turn["status"], turn["final_text"]) == ("completed", "the task is done")
    assert turn["provider_attempt_timeline"]["winning_model_ref"] == model


def test_a_tick_model_wins_and_is_carried_on(agent, script):
    chosen = script({"text": "never used"})
    enqueue = {"name": "Enqueue", "arguments": {"text": "x"}}
    tick_model = script(
        {"text": "queueing", "tool_calls": [enqueue]},
        {"text": "ran with the tick's model"},
        {"text": "and so did this"},
        name="b.jsonl",
    )
    assert run("prompt", "a", "go", "--no-wait", "--model", chosen).returncode == 0
    r = run("tick", "a", "--json", "--model", tick_model)
    (turn,) = json.loads(r.stdout)["agents"][0]["turns"]
    assert turn["final_text"] == "ran with the tick's model"
    assert _envelopes(agent)["internal_followup"]["model_ref"] == tick_model
    assert _tick()["turns"][0]["final_text"] == "and so did this"

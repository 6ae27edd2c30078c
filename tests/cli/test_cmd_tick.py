"""`holon tick`: idle agents, one turn or until idle, the JSON report, exit codes 0/1/2/3."""

from __future__ import annotations

import json

from cmd_checks import fails, invoke, ok, ok_json
from scenario_helpers import cli

from holon.agent import admission, control
from holon.cli.tick import tick_cmd


def queue(agent, *texts: str) -> None:
    for text in texts:
        admission.admit(agent, "enqueue", "system_tick", admission.text_body(text))


def test_idle_agents_report_idle_and_print_nothing(agent):
    assert ok_json(tick_cmd, "a", "--json") == {"agents": [{"agent_id": "a", "outcome": "idle"}]}
    assert ok(tick_cmd, "a").stdout == ""
    assert ok_json(tick_cmd, "--all", "--json")["agents"] == [{"agent_id": "a", "outcome": "idle"}]


def test_one_turn_per_tick_unless_until_idle(agent, script):
    model = script({"text": "one"}, {"text": "two"}, {"text": "three"})
    queue(agent, "m1", "m2", "m3")
    doc = ok_json(tick_cmd, "a", "--model", model, "--json")
    (report,) = doc["agents"]
    assert report["agent_id"] == "a" and report["outcome"] == "ran"
    assert [t["status"] for t in report["turns"]] == ["completed"]
    assert report["turns"][0]["final_text"] == "one" and agent.queue.depth() == 2
    out = ok(tick_cmd, "a", "--model", model, "--until-idle").stdout.splitlines()
    assert out[0] == "a: ran" and len(out) == 3
    assert all(line.startswith("  msg_") and line.endswith(" completed") for line in out[1:])
    assert agent.queue.depth() == 0


def test_failed_turn_exits_1(agent, script):
    queue(agent, "m1")
    result = invoke(tick_cmd, "a", "--model", script({"error": {"status": 400}}), "--json")
    assert result.exit_code == 1
    (report,) = json.loads(result.stdout)["agents"]
    assert report["turns"][0]["status"] == "failed"
    assert report["turns"][0]["failure_artifact"]["summary"]


def test_paused_agent_with_work_exits_3_and_keeps_its_queue(agent, script):
    queue(agent, "m1")
    control.pause(agent)
    code, out, err = cli("tick", "a", "--model", script({"text": "never"}))
    assert code == 3 and out == ""
    assert err.splitlines() == ["a: paused", "hint: run `holon resume a` to process its queue"]
    assert agent.queue.depth() == 1
    code, out, _ = cli("tick", "--all", "--json", "--model", script({"text": "never"}))
    assert code == 0  # --all reports but does not fail on a paused agent
    assert json.loads(out)["agents"][0]["outcome"] == "paused"


def test_due_timer_fires_on_tick(agent, script, monkeypatch):
    from holon.ops import timers

    monkeypatch.setenv("HOLON_NOW", "2026-03-01T10:00:00Z")
    timers.create(agent, after="1m", text="wake up")
    monkeypatch.setenv("HOLON_NOW", "2026-03-01T10:05:00Z")
    (report,) = ok_json(tick_cmd, "a", "--model", script({"text": "woke"}), "--json")["agents"]
    assert report["fired"] and report["turns"][0]["final_text"] == "woke"


def test_usage_errors(agent):
    fails("tick", code=2, kind="missing_agent")
    fails("tick", "nobody", code=2, kind="unknown_agent")
    fails("tick", "a", "nobody", code=2, kind="unknown_agent")

"""`holon pause|resume|stop|wake`: durable status changes, their JSON and text, and the
refusals (exit 3)."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok, ok_json, usage_error

from holon.cli.control import pause_cmd, resume_cmd, stop_cmd, wake_cmd
from holon.store import jsonl


def status(agent) -> str:
    return json.loads(agent.state_json.read_text())["status"]


def test_pause_resume_stop_json_shape_and_state(agent):
    doc = ok_json(pause_cmd, "a", "--json")
    assert doc == {
        "agent_id": "a",
        "previous_status": "awake_idle",
        "status": "paused",
        "queue_depth": 0,
    }
    assert status(agent) == "paused"
    assert ok_json(pause_cmd, "a", "--json")["status"] == "paused"  # idempotent
    assert ok_json(resume_cmd, "a", "--json")["status"] == "awake_idle"
    doc = ok_json(stop_cmd, "a", "--json")
    assert (doc["previous_status"], doc["status"]) == ("awake_idle", "stopped")
    assert status(agent) == "stopped"
    assert ok(resume_cmd, "a").stdout == "a: stopped -> awake_idle\n"
    kinds = [e["kind"] for e in jsonl.read(agent.events) if e["kind"].startswith("agent_")]
    assert kinds == [
        "agent_paused",
        "agent_paused",
        "agent_resumed",
        "agent_stopped",
        "agent_resumed",
    ]


def test_wake_is_a_no_op_for_an_awake_agent(agent):
    assert ok(wake_cmd, "a").stdout == "a: awake_idle -> awake_idle\n"


def test_queue_depth_is_reported(agent):
    from holon.agent import admission

    admission.admit(agent, "enqueue", "system_tick", admission.text_body("x"))
    assert ok_json(pause_cmd, "a", "--json")["queue_depth"] == 1


@pytest.mark.parametrize(
    "first, cmd, kind",
    [
        (stop_cmd, "wake", "agent_stopped"),
        (pause_cmd, "wake", "agent_paused"),
        (stop_cmd, "pause", "agent_stopped"),
    ],
)
def test_refusals_exit_3_and_change_nothing(agent, first, cmd, kind):
    before = ok_json(first, "a", "--json")["status"]
    events = len(list(jsonl.read(agent.events)))
    _, err = fails(cmd, "a", code=3, kind=kind)
    assert "holon resume a" in err
    assert status(agent) == before
    assert len(list(jsonl.read(agent.events))) == events


@pytest.mark.parametrize("name", ["pause", "resume", "stop", "wake"])
def test_unknown_agent_and_missing_argument(name):
    fails(name, "nobody", code=2, kind="unknown_agent")
    cmd = {"pause": pause_cmd, "resume": resume_cmd, "stop": stop_cmd, "wake": wake_cmd}[name]
    usage_error(cmd)

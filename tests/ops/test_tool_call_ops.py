"""holon.ops.tools: `holon tool call` runs one tool outside a turn and applies its effects."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T0, cli, set_now

from holon import clock
from holon.agent import nextdue, timers, workitems
from holon.agent.handle import Agent
from holon.ops import tools


def test_sleep_with_duration_sets_the_sleep_timer(agent, monkeypatch):
    set_now(monkeypatch, T0)
    outcome = tools.call(agent, "Sleep", {"duration_ms": 90_000, "reason": "cool down"})
    assert outcome.envelope["status"] == "success"
    assert outcome.envelope["result"] == {"sleeping_until": clock.iso(T0 + 90)}
    assert "effects" not in outcome.envelope and outcome.effects.sleep.duration_ms == 90_000
    (timer,) = timers.load(agent)
    assert timer["id"] == "sleep" and timer["due_ts"] == pytest.approx(T0 + 90)
    assert timer["text"] == "Sleep of 90000 ms ended. Reason: cool down"
    assert nextdue.read(agent) == pytest.approx(T0 + 90)
    # no turn: no transcript, no brief, no closure, and the posture is unchanged
    assert not agent.transcript.exists() and not agent.briefs.exists()
    state = Agent(agent).state()
    assert state.closure is None and state.status.value == "awake_idle"


def test_sleep_without_duration_cancels_the_pending_sleep_timer(agent, monkeypatch):
    set_now(monkeypatch, T0)
    other = timers.create(agent, every="1h")
    tools.call(agent, "Sleep", {"duration_ms": 90_000})
    tools.call(agent, "Sleep", {"duration_ms": 30_000})
    assert [t["due_ts"] for t in timers.load(agent)] == [pytest.approx(T0 + 30), T0 + 3600]
    outcome = tools.call(agent, "Sleep", {})
    assert outcome.envelope["result"] == {"sleeping_until": None}
    assert [t["id"] for t in timers.load(agent)] == [other["id"]]
    assert nextdue.read(agent) == pytest.approx(T0 + 3600)


def test_a_failed_call_applies_nothing(agent):
    outcome = tools.call(agent, "Sleep", {"duration_ms": "soon"})
    assert outcome.envelope["status"] == "error" and outcome.effects is None
    assert outcome.envelope["error"]["kind"] == "invalid_tool_input"
    assert timers.load(agent) == [] and not agent.next_due.exists()


def test_tools_run_in_the_agent_context(agent):
    outcome = tools.call(agent, "ExecCommand", {"cmd": "pwd"})
    assert outcome.envelope["status"] == "success"
    assert str(agent.root) in outcome.rendered
    created = tools.call(agent, "CreateWorkItem", {"objective": "From a tool call"})
    wid = created.envelope["result"]["work_item"]["id"]
    assert workitems.get(agent, wid)["objective"] == "From a tool call"


def test_tool_call_command(agent, monkeypatch):
    set_now(monkeypatch, T0)
    code, out, err = cli("tool", "call", "a", "Sleep", "--input", '{"duration_ms": 60000}')
    assert code == 0, err
    envelope = json.loads(out)
    assert envelope["status"] == "success" and set(envelope) == {
        "tool_name",
        "status",
        "summary_text",
        "result",
        "error",
    }
    assert timers.load(agent)[0]["id"] == "sleep"
    code, out, _ = cli("tool", "call", "a", "Sleep", "--render")
    assert code == 0 and out.startswith("sleeping until woken")
    assert timers.load(agent) == []
    code, out, _ = cli("tool", "call", "a", "GetWorkItem", "--input", '{"work_item_id": "wi_x"}')
    assert code == 1 and json.loads(out)["error"]["kind"] == "unknown_work_item"
    assert cli("tool", "call", "a", "NoSuchTool")[0] == 2
    assert cli("tool", "call", "a", "Sleep", "--input", "[1]")[0] == 2
    assert cli("tool", "call", "a", "Sleep", "--input", "{nope")[0] == 2

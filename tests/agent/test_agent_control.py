"""holon.agent.control: pause, resume, stop and wake — durable transitions, refusals and events."""

from __future__ import annotations

import pytest

from holon.agent import control, nextdue
from holon.agent.admission import admit, text_body
from holon.agent.handle import Agent
from holon.errors import NotRunnable
from holon.model.records import AgentStatus
from holon.store import jsonl
from holon.store.atomic import read_json

T0 = 1_800_000_000.0


def _status(home) -> str:
    return read_json(home.state_json)["status"]


def _set(home, **fields):
    if "status" in fields:
        fields["status"] = AgentStatus(fields["status"])
    Agent(home).update_state(lambda s: [setattr(s, k, v) for k, v in fields.items()])


def _lifecycle_events(home):
    return [
        (e["kind"], e["data"]["previous_status"], e["data"]["status"])
        for e in jsonl.read(home.events)
        if e["kind"].startswith("agent_")
    ]


def test_pause_and_resume_from_idle(agent):
    out = control.pause(agent)
    assert out == {
        "agent_id": "a",
        "previous_status": "awake_idle",
        "status": "paused",
        "queue_depth": 0,
    }
    assert read_json(agent.state_json)["paused_from"] == "awake_idle"
    out = control.resume(agent)
    assert (out["previous_status"], out["status"]) == ("paused", "awake_idle")
    assert read_json(agent.state_json)["paused_from"] is None
    assert _lifecycle_events(agent) == [
        ("agent_paused", "awake_idle", "paused"),
        ("agent_resumed", "paused", "awake_idle"),
    ]


def test_resume_returns_a_paused_sleeper_to_sleep(agent):
    _set(agent, status="asleep", sleeping_until="2027-01-16T00:00:00.000Z")
    control.pause(agent)
    control.pause(agent)  # pausing twice keeps where it came from
    assert read_json(agent.state_json)["paused_from"] == "asleep"
    assert control.resume(agent)["status"] == "asleep"


def test_resume_of_a_running_agent_changes_nothing(agent):
    out = control.resume(agent)
    assert (out["previous_status"], out["status"]) == ("awake_idle", "awake_idle")


def test_stop_and_resume(agent):
    admit(agent, "cli_prompt", "operator_prompt", text_body("queued"))
    out = control.stop(agent)
    assert out["status"] == "stopped" and out["queue_depth"] == 1
    assert control.resume(agent)["status"] == "awake_idle"


def test_stop_from_paused_forgets_paused_from(agent):
    _set(agent, status="asleep")
    control.pause(agent)
    control.stop(agent)
    assert read_json(agent.state_json)["paused_from"] is None
    assert control.resume(agent)["status"] == "awake_idle"


@pytest.mark.parametrize(
    "action, kind", [(control.pause, "agent_stopped"), (control.wake, "agent_stopped")]
)
def test_stopped_agent_refuses(agent, action, kind):
    control.stop(agent)
    before = agent.state_json.read_bytes()
    events = len(list(jsonl.read(agent.events)))
    with pytest.raises(NotRunnable) as err:
        action(agent)
    assert err.value.kind == kind and err.value.exit_code == 3
    assert "holon resume a" in err.value.hint
    assert agent.state_json.read_bytes() == before  # nothing written
    assert len(list(jsonl.read(agent.events))) == events  # no event


def test_wake_refuses_a_paused_agent(agent):
    control.pause(agent)
    with pytest.raises(NotRunnable) as err:
        control.wake(agent)
    assert err.value.kind == "agent_paused"
    assert _status(agent) == "paused"


def test_wake_a_sleeper(agent):
    _set(agent, status="asleep", sleeping_until="2027-01-16T00:00:00.000Z")
    out = control.wake(agent)
    assert (out["previous_status"], out["status"]) == ("asleep", "awake_idle")
    assert read_json(agent.state_json)["sleeping_until"] is None
    assert _lifecycle_events(agent)[-1] == ("agent_woken", "asleep", "awake_idle")
    assert control.wake(agent)["status"] == "awake_idle"  # waking the awake is harmless


def test_next_due_follows_a_continuable_closure(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0))
    _set(agent, closure={"outcome": "continuable"})
    assert nextdue.refresh(agent) == T0
    control.pause(agent)
    assert not agent.next_due.exists()  # a paused agent has nothing due
    control.resume(agent)
    assert nextdue.read(agent) == T0
    control.stop(agent)
    assert not agent.next_due.exists()


def test_cli_control_commands(agent):
    from scenario_helpers import cli

    assert cli("pause", "a")[0] == 0
    code, _, err = cli("wake", "a")
    assert code == 3 and "agent_paused" in err
    assert cli("resume", "a")[0] == 0
    assert cli("stop", "a")[0] == 0
    code, _, err = cli("wake", "a")
    assert code == 3 and "agent_stopped" in err
    assert _status(agent) == "stopped"

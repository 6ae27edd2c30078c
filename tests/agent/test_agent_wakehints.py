"""holon.agent.wakehints: coalesced wake hints, converted into one system_tick by a tick."""

from __future__ import annotations

import json

from holon.agent import control, wakehints
from holon.agent.handle import Agent
from holon.store import jsonl
from holon.store.atomic import read_json, write_json


def _ticks(home):
    return [m for m in jsonl.read(home.messages) if m["kind"] == "system_tick"]


def test_submit_coalesces_into_one_file(agent):
    wakehints.submit(agent, trigger_id="trg_1", source="ci")
    hint = wakehints.submit(
        agent, trigger_id="trg_1", body="second", content_type="application/json"
    )
    assert hint["deliveries"] == 2 and hint["source"] == "ci"
    assert read_json(agent.wake_hint) == hint
    assert [p["body"] for p in hint["payloads"]] == ["second"]
    assert hint["payloads"][0]["content_type"] == "application/json"
    pending = Agent(agent).state().pending_wake_hint
    assert pending["deliveries"] == 2 and pending["contentful"] is True
    received = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "wake_hint_received"]
    assert [r["contentful"] for r in received] == [False, True]
    assert agent.queue.pending() == [] and not agent.messages.exists()  # a hint is not a message


def test_submit_keeps_the_latest_payloads(agent):
    for i in range(wakehints.MAX_KEPT_PAYLOADS + 3):
        hint = wakehints.submit(agent, trigger_id=None, body=f"p{i}")
    assert [p["body"] for p in hint["payloads"]] == ["p3", "p4", "p5", "p6", "p7"]
    assert hint["deliveries"] == 8


def test_convert_contentful_makes_one_tick(agent):
    wakehints.submit(agent, trigger_id="trg_1", source="ci", body="build 42 failed")
    wakehints.submit(agent, trigger_id="trg_1", body="build 43 failed")
    a = Agent(agent)
    (mid,) = wakehints.convert(a)
    (tick,) = _ticks(agent)
    assert tick["id"] == mid
    assert tick["origin"] == {"kind": "callback", "descriptor_id": "trg_1", "source": "ci"}
    assert (
        tick["delivery_surface"] == "http_callback_wake" and tick["trust"] == "trusted_integration"
    )
    assert tick["body"]["type"] == "text"
    text = tick["body"]["text"]
    assert "fired 2 time(s)" in text and "build 42 failed" in text and "build 43 failed" in text
    assert tick["metadata"]["contentful"] is True
    assert not agent.wake_hint.exists() and not agent.wake_hint_converting.exists()
    assert a.state().pending_wake_hint is None
    assert len(agent.queue.pending()) == 1
    (conv,) = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "wake_hint_converted"]
    assert conv == {"message_id": mid, "deliveries": 2, "contentful": True}
    assert wakehints.convert(a) == []  # nothing left


def test_convert_liveness_only(agent):
    wakehints.submit(agent, trigger_id=None, source="poller")
    (mid,) = wakehints.convert(Agent(agent))
    (tick,) = _ticks(agent)
    assert tick["origin"] == {"kind": "system", "subsystem": "wake_hint"}
    assert (
        tick["delivery_surface"] == "runtime_system"
        and tick["admission_context"] == "runtime_owned"
    )
    value = tick["body"]["value"]
    assert tick["body"]["type"] == "json" and value["liveness_only"] is True
    assert value["wake_hint"]["contentful"] is False and value["wake_hint"]["source"] == "poller"
    assert "does not clear any blocker" in value["note"]


def test_paused_agent_is_not_converted(agent):
    wakehints.submit(agent, trigger_id="trg_1", body="x")
    control.pause(agent)
    assert wakehints.convert(Agent(agent)) == []
    assert agent.wake_hint.exists() and _ticks(agent) == []
    control.resume(agent)
    assert len(wakehints.convert(Agent(agent))) == 1


def test_stopped_agent_is_not_converted(agent):
    wakehints.submit(agent, trigger_id=None)
    control.stop(agent)
    assert wakehints.convert(Agent(agent)) == []
    assert agent.wake_hint.exists()


def test_crash_left_converting_file_is_picked_up(agent):
    hint = {
        "schema_version": 1,
        "target_agent_id": "a",
        "deliveries": 3,
        "external_trigger_id": "trg_9",
        "last_received_at": "2027-01-15T08:00:00.000Z",
        "payloads": [{"received_at": "t", "content_type": "text/plain", "body": "left behind"}],
    }
    write_json(agent.wake_hint_converting, hint)
    (mid,) = wakehints.convert(Agent(agent))
    (tick,) = _ticks(agent)
    assert tick["id"] == mid and "left behind" in tick["body"]["text"]
    assert "fired 3 time(s)" in tick["body"]["text"]
    assert not agent.wake_hint_converting.exists()


def test_a_newer_hint_waits_for_the_next_conversion(agent):
    write_json(agent.wake_hint_converting, {"deliveries": 1, "payloads": [{"body": "old"}]})
    wakehints.submit(agent, trigger_id=None, body="new")
    a = Agent(agent)
    wakehints.convert(a)
    assert agent.wake_hint.exists()  # not overwritten by the crash leftover
    wakehints.convert(a)
    bodies = [json.dumps(t["body"]) for t in _ticks(agent)]
    assert len(bodies) == 2 and "old" in bodies[0] and "new" in bodies[1]
    assert not agent.wake_hint.exists() and not agent.wake_hint_converting.exists()

"""holon.ops.status: the `holon status` document, from persisted state only."""

from __future__ import annotations

import json

from scenario_helpers import T0, cli, set_now

from holon import clock
from holon.agent import admission, control, timers, triggers, wakehints, workitems
from holon.agent.handle import Agent
from holon.ops import status
from holon.ops import timers as timer_ops
from holon.runtime.tick import tick

KEYS = {
    "agent_id",
    "context",
    "home",
    "identity",
    "status",
    "closure",
    "last_continuation",
    "queue",
    "tasks",
    "current_work_item",
    "active_workspace",
    "active_task_ids",
    "active_children",
    "model",
    "token_usage",
    "last_turn",
    "sleeping_until",
    "last_tick_at",
    "last_brief_at",
    "loaded_agents_md",
    "work_items",
    "timers",
    "external_trigger",
    "pending_wake_hint",
    "next_due_at",
    "sandbox",
    "budget",
}


def test_fresh_agent_document(agent):
    doc = status.agent_summary(agent)
    assert set(doc) == KEYS
    assert doc["agent_id"] == "a" and doc["home"] == str(agent.root)
    assert doc["identity"] == {
        "agent_id": "a",
        "agent_home": str(agent.root),
        "kind": "named",
        "visibility": "public",
        "ownership": "self_owned",
        "profile_preset": "public_named",
        "lineage_parent_agent_id": None,
    }
    assert doc["status"] == "awake_idle" and doc["closure"] is None
    assert doc["queue"] == {
        "pending": 0,
        "in_progress": 0,
        "dead_letters": 0,
        "deferred": 0,
        "next_not_before": None,
    }
    assert doc["tasks"] == {"active": 0}
    assert doc["model"]["effective_model"] is None and doc["model"]["source"] == "runtime_default"
    assert doc["token_usage"]["total"]["total_tokens"] == 0
    assert doc["loaded_agents_md"] == [
        {"scope": "agent", "path": str(agent.agents_md), "bytes": agent.agents_md.stat().st_size}
    ]
    assert doc["work_items"] == {} and doc["timers"] == [] and doc["next_due_at"] is None
    assert "lifecycle_hint" not in doc
    json.dumps(doc)  # a JSON document


def test_document_after_a_turn(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    monkeypatch.setenv(
        "HOLON_MODEL", script({"text": "hi", "usage": {"input_tokens": 5, "output_tokens": 2}})
    )
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("hello"))
    tick(agent)
    doc = status.agent_summary(agent)
    assert doc["closure"]["outcome"] == "completed"
    assert doc["last_continuation"]["mode"] == "local_continuation"
    assert doc["token_usage"]["total"]["total_tokens"] == 7
    assert doc["token_usage"]["total_model_rounds"] == 1
    assert doc["last_turn"]["last_assistant_message"] == "hi"
    assert doc["last_tick_at"] == doc["last_brief_at"] == clock.iso(T0)
    assert doc["model"]["effective_model"].startswith("scripted/")


def test_queue_timers_work_items_trigger_and_hint(agent, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("one"))
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("two"))
    agent.queue.claim()  # one in progress, one pending
    (agent.queue.dead / "2-00000000000000000001-1-dead.json").write_text("{}")
    timer = timer_ops.create(agent, after="10m")
    current = workitems.append(a, workitems.new_record("a", "Current"))
    workitems.append(a, workitems.new_record("a", "Queued"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", current["id"]))
    triggers.rotate(agent)
    wakehints.submit(agent, trigger_id=None, source="ci")
    doc = status.agent_summary(agent)
    assert doc["queue"] == {
        "pending": 1,
        "in_progress": 1,
        "dead_letters": 1,
        "deferred": 0,
        "next_not_before": None,
    }
    assert doc["timers"] == [{"id": timer["id"], "schedule": "once", "due_at": clock.iso(T0 + 600)}]
    assert doc["next_due_at"] == clock.iso(T0 + 600)
    assert doc["work_items"] == {"current": 1, "queued_runnable": 1}
    assert doc["current_work_item"] == {
        "work_item_id": current["id"],
        "objective": "Current",
        "state": "open",
        "scheduling_state": "runnable",
    }
    assert doc["external_trigger"]["status"] == "active"
    assert "token_sha256" not in doc["external_trigger"]
    assert doc["pending_wake_hint"]["source"] == "ci"
    assert doc["pending_wake_hint"]["deliveries"] == 1


def test_lifecycle_hints_and_missing_agents_md(agent):
    control.pause(agent)
    doc = status.agent_summary(agent)
    assert doc["status"] == "paused" and "holon resume a" in doc["lifecycle_hint"]
    control.stop(agent)
    doc = status.agent_summary(agent)
    assert doc["lifecycle_hint"].startswith("stopped: run `holon resume a`")
    agent.agents_md.unlink()
    assert status.agent_summary(agent)["loaded_agents_md"] == []


def test_status_command_prints_the_document(agent):
    timers.create(agent, every="1h")
    code, out, err = cli("status", "a", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert KEYS <= set(doc) and len(doc["timers"]) == 1


def test_a_message_deferred_by_an_outage_is_shown_with_its_time(agent):
    admission.admit(agent, "enqueue", "system_tick", admission.text_body("later"))
    name, _ = agent.queue.claim()
    agent.queue.release(name, 4_102_444_800.0)  # 2100-01-01
    queue = status.agent_summary(agent)["queue"]
    assert queue["deferred"] == 1 and queue["next_not_before"].startswith("2100-01-01T00:00:00")
    code, out, _ = cli("status", "a")
    assert code == 0 and "1 deferred until 2100-01-01T00:00:00" in out

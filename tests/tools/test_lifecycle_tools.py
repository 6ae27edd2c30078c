"""Sleep, Enqueue and NotifyOperator in-process; ToolEffects merging and recording."""

from __future__ import annotations

import json

import pytest

from holon import clock
from holon.agent.handle import Agent
from holon.store import jsonl
from holon.tools import registry
from holon.tools.base import CompletionEffect, SleepEffect, ToolContext, ToolEffects
from holon.tools.lifecycle import Enqueue, NotifyOperator, Sleep

NOW = 1_700_000_000


@pytest.fixture
def ctx(agent):
    return ToolContext(
        agent=Agent(agent),
        execution_root=agent.root,
        cwd=agent.root,
        message_id="msg_cause",
        turn_id="turn_1",
    )


def events(home, kind):
    return [e for e in jsonl.read(home.events) if e["kind"] == kind]


def test_sleep_with_duration_returns_effect_and_creates_no_timer(ctx, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(NOW))
    timers_before = sorted(p.name for p in ctx.home.timers.iterdir())
    out = registry.call(ctx, "Sleep", {"duration_ms": 1500, "reason": "wait for build"})
    until = clock.iso(NOW + 1.5)
    assert out.envelope["status"] == "success"
    assert out.envelope["result"] == {"sleeping_until": until}
    assert "runtime_effect" not in json.dumps(out.envelope)
    assert out.effects == ToolEffects(
        sleep=SleepEffect(until=until, reason="wait for build", duration_ms=1500)
    )
    assert out.envelope["summary_text"].startswith(f"sleeping until {until}")
    assert sorted(p.name for p in ctx.home.timers.iterdir()) == timers_before
    [ev] = events(ctx.home, "sleep_requested")
    assert ev["data"] == {"until": until, "reason": "wait for build", "slept_at": clock.iso(NOW)}


@pytest.mark.parametrize("args", [{}, {"duration_ms": 0}])
def test_sleep_without_duration_rests_until_woken(ctx, args):
    out = registry.call(ctx, "Sleep", args)
    assert out.envelope["result"] == {"sleeping_until": None}
    assert out.effects.sleep == SleepEffect()
    assert out.effects.to_record() == {"sleep": {}}
    assert out.envelope["summary_text"] == "sleeping until woken; end your turn now"


def test_sleep_rejects_negative_duration(ctx):
    out = registry.call(ctx, "Sleep", {"duration_ms": -1})
    assert out.envelope["error"]["kind"] == "invalid_tool_input" and out.effects is None
    assert events(ctx.home, "sleep_requested") == []


def test_enqueue_admits_an_internal_followup(ctx):
    out = registry.call(ctx, "Enqueue", {"text": "check the build", "priority": "next"})
    res = out.envelope["result"]
    assert res["priority"] == "next" and out.effects is None
    [msg] = jsonl.read(ctx.home.messages)
    assert msg["id"] == res["message_id"] and msg["kind"] == "internal_followup"
    assert msg["body"] == {"type": "text", "text": "check the build"}
    assert (msg["trust"], msg["authority_class"]) == ("trusted_system", "runtime_instruction")
    assert msg["causation_id"] == "msg_cause" and msg["origin"]["kind"] == "system"
    [name] = ctx.home.queue.pending()
    assert name.startswith("1-")  # the "next" band
    assert ctx.home.queue.peek_all()[0]["id"] == res["message_id"]


def test_enqueue_default_priority_and_empty_text(ctx):
    assert registry.call(ctx, "Enqueue", {"text": "x"}).envelope["result"]["priority"] == "normal"
    assert ctx.home.queue.pending()[0].startswith("2-")
    bad = registry.call(ctx, "Enqueue", {"text": ""}).envelope
    assert (
        bad["error"]["kind"] == "invalid_tool_input" and bad["error"]["details"]["field"] == "text"
    )
    bad = registry.call(ctx, "Enqueue", {"text": "x", "priority": "interject"}).envelope
    assert bad["error"]["details"]["field"] == "priority"
    assert len(ctx.home.queue.pending()) == 1


def test_notify_operator_writes_an_ack_brief(ctx):
    ctx.agent.update_state(lambda s: setattr(s, "current_work_item_id", "wi_1"))
    out = registry.call(
        ctx, "NotifyOperator", {"text": "need a key", "visibility": "action_required"}
    )
    [brief] = jsonl.read(ctx.home.briefs)
    assert out.envelope["result"] == {"brief_id": brief["id"]}
    assert out.envelope["summary_text"] == "operator notified (action_required)"
    assert (brief["kind"], brief["text"], brief["visibility"]) == (
        "ack",
        "need a key",
        "action_required",
    )
    assert brief["work_item_id"] == "wi_1" and brief["related_message_id"] == "msg_cause"
    [entry] = [e for e in jsonl.read(ctx.home.transcript) if e["kind"] == "brief"]
    assert entry["turn_id"] == "turn_1" and entry["data"]["brief"]["id"] == brief["id"]
    assert ctx.agent.state().last_brief_at == brief["created_at"]
    assert out.effects is None


def test_notify_operator_default_visibility(ctx):
    registry.call(ctx, "NotifyOperator", {"text": "fyi"})
    [brief] = jsonl.read(ctx.home.briefs)
    assert brief["visibility"] == "turn_result" and brief["work_item_id"] is None


def test_tool_classes_are_lifecycle_family():
    assert {t.family for t in (Sleep(), Enqueue(), NotifyOperator())} == {"lifecycle"}
    assert not any(t.mutates for t in (Sleep(), Enqueue(), NotifyOperator()))
    assert "Sleep" in Sleep.guidance


def test_effects_merge_later_fields_win_and_keep_the_rest():
    first = ToolEffects(sleep=SleepEffect(reason="a"))
    done = ToolEffects(completion=CompletionEffect(work_item_id="wi_1", report="r"))
    merged = first.merged(done)
    assert merged.sleep.reason == "a" and merged.completion.work_item_id == "wi_1"
    again = merged.merged(ToolEffects(sleep=SleepEffect(reason="b", duration_ms=5)))
    assert again.sleep == SleepEffect(reason="b", duration_ms=5)
    assert again.completion == merged.completion
    assert first.sleep.reason == "a"  # merging copies
    assert ToolEffects().to_record() is None
    assert again.to_record() == {
        "sleep": {"reason": "b", "duration_ms": 5},
        "completion": {"work_item_id": "wi_1", "report": "r"},
    }

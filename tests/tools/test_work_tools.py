"""Work-item tools in-process: create, pick, update, complete (a CompletionEffect), get, list."""

from __future__ import annotations

import json

import pytest

from holon import clock
from holon.agent import workitems
from holon.agent.handle import Agent
from holon.store import jsonl
from holon.tools import registry
from holon.tools.base import CompletionEffect, ToolContext
from holon.tools.work import GUIDANCE, CreateWorkItem

NOW = 1_700_000_000


@pytest.fixture
def ctx(agent):
    return ToolContext(
        agent=Agent(agent),
        execution_root=agent.root,
        cwd=agent.root,
        message_id="msg_1",
        turn_id="turn_1",
    )


def call(ctx, name, args):
    out = registry.call(ctx, name, args)
    assert json.loads(json.dumps(out.envelope)) == out.envelope
    return out


def create(ctx, **args):
    out = call(ctx, "CreateWorkItem", {"objective": "ship it", **args})
    assert out.envelope["status"] == "success", out.rendered
    return out.envelope["result"]["work_item"]


def test_create_writes_plan_and_is_not_current(ctx):
    item = create(
        ctx,
        plan="step one",
        plan_status="ready",
        todo_list=[{"text": "a"}, {"text": "b", "state": "completed"}],
    )
    assert item["state"] == "open" and item["readiness"] == "queued_runnable"
    assert item["plan_status"] == "ready" and "plan" not in item
    assert item["todo_list"] == [
        {"text": "a", "state": "pending"},
        {"text": "b", "state": "completed"},
    ]
    assert ctx.home.plan_path(item["id"]).read_text() == "step one\n"
    assert item["plan_artifact"]["preview"] == "step one\n"
    assert ctx.agent.state().current_work_item_id is None
    assert workitems.get(ctx.home, item["id"])["objective"] == "ship it"


def test_create_without_plan_has_no_plan_artifact(ctx):
    item = create(ctx)
    assert item["plan_status"] == "draft" and item["plan_artifact"] is None
    assert not ctx.home.plan_path(item["id"]).exists()


def test_create_rejects_empty_objective_and_bad_todo(ctx):
    env = call(ctx, "CreateWorkItem", {"objective": ""}).envelope
    assert env["error"]["kind"] == "invalid_tool_input"
    env = call(
        ctx, "CreateWorkItem", {"objective": "x", "todo_list": [{"text": "a", "state": "done"}]}
    ).envelope
    assert env["error"]["details"]["field"].startswith("todo_list.0")
    assert workitems.load_all(ctx.home) == {}


def test_pick_makes_it_current(ctx):
    item = create(ctx)
    out = call(ctx, "PickWorkItem", {"work_item_id": item["id"]})
    assert out.envelope["result"]["work_item"]["readiness"] == "current"
    assert ctx.agent.state().current_work_item_id == item["id"]


def test_unknown_item_lists_known_ids(ctx):
    item = create(ctx)
    for name in ("PickWorkItem", "UpdateWorkItem", "CompleteWorkItem", "GetWorkItem"):
        err = call(ctx, name, {"work_item_id": "wi_nope"}).envelope["error"]
        assert err["kind"] == "unknown_work_item" and err["details"] == {"known": [item["id"]]}
        assert "ListWorkItems" in err["recovery_hint"]


def test_update_replaces_todo_and_sets_and_clears_blocker(ctx, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(NOW))
    item = create(ctx, todo_list=[{"text": "old"}])
    out = call(
        ctx,
        "UpdateWorkItem",
        {
            "work_item_id": item["id"],
            "todo_list": [{"text": "new"}],
            "blocked_by": "CI",
            "recheck_after": 60000,
        },
    )
    rec = out.envelope["result"]["work_item"]
    assert rec["todo_list"] == [{"text": "new", "state": "pending"}]
    assert rec["blocked_by"] == "CI" and rec["recheck_at"] == clock.iso(NOW + 60)
    assert rec["readiness"] == "blocked" and rec["objective"] == "ship it"
    [ev] = [e for e in jsonl.read(ctx.home.events) if e["kind"] == "work_item_updated"]
    assert ev["data"]["fields"] == ["blocked_by", "recheck_after", "todo_list"]
    out = call(ctx, "UpdateWorkItem", {"work_item_id": item["id"], "blocked_by": None})
    rec = out.envelope["result"]["work_item"]
    assert rec["blocked_by"] is None and rec["recheck_at"] is None
    assert rec["todo_list"] == [{"text": "new", "state": "pending"}]  # untouched


def test_update_blocker_without_recheck_uses_the_default(ctx, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(NOW))
    monkeypatch.setenv("HOLON_WORK_ITEM_DEFAULT_RECHECK_MS", "5000")
    item = create(ctx)
    rec = call(
        ctx, "UpdateWorkItem", {"work_item_id": item["id"], "blocked_by": "review"}
    ).envelope["result"]["work_item"]
    assert rec["recheck_at"] == clock.iso(NOW + 5)


@pytest.mark.parametrize("extra", [{}, {"blocked_by": ""}, {"blocked_by": None}])
def test_recheck_after_needs_a_blocker(ctx, extra):
    item = create(ctx)
    env = call(
        ctx, "UpdateWorkItem", {"work_item_id": item["id"], "recheck_after": 10, **extra}
    ).envelope
    assert env["error"]["kind"] == "invalid_tool_input" and "blocked_by" in env["error"]["message"]
    assert len(list(jsonl.read(ctx.home.work_items))) == 1  # nothing appended


def test_update_objective_and_plan_status(ctx):
    item = create(ctx)
    rec = call(
        ctx,
        "UpdateWorkItem",
        {"work_item_id": item["id"], "objective": "ship v2", "plan_status": "needs_input"},
    ).envelope["result"]["work_item"]
    assert rec["objective"] == "ship v2" and rec["readiness"] == "waiting_for_operator"


def test_complete_with_report_returns_a_completion_effect(ctx):
    item = create(ctx)
    call(ctx, "PickWorkItem", {"work_item_id": item["id"]})
    ctx.round_text = "  All done: shipped.  "
    out = call(ctx, "CompleteWorkItem", {"work_item_id": item["id"]})
    res = out.envelope["result"]
    assert "runtime_effect" not in json.dumps(out.envelope)
    assert out.effects.completion == CompletionEffect(
        work_item_id=item["id"], report="All done: shipped."
    )
    assert out.effects.sleep is None
    assert res["work_item"]["state"] == "completed"
    assert res["work_item"]["completion_report"] == "All done: shipped."
    [summary] = jsonl.read(ctx.home.delivery_summaries)
    assert summary["id"] == res["delivery_summary_id"] and summary["turn_id"] == "turn_1"
    assert summary["message_id"] == "msg_1" and summary["text"] == "All done: shipped."
    assert ctx.agent.state().current_work_item_id is None
    again = call(ctx, "CompleteWorkItem", {"work_item_id": item["id"]}).envelope
    assert again["error"]["kind"] == "work_item_completed"
    for name, args in (("PickWorkItem", {}), ("UpdateWorkItem", {"objective": "x"})):
        err = call(ctx, name, {"work_item_id": item["id"], **args}).envelope["error"]
        assert err["kind"] == "work_item_completed"


def test_complete_without_report_warns_and_asks_nothing(ctx):
    item = create(ctx)
    other = create(ctx, objective="other")
    call(ctx, "PickWorkItem", {"work_item_id": other["id"]})
    ctx.round_text = "   "
    out = call(ctx, "CompleteWorkItem", {"work_item_id": item["id"]})
    assert out.effects is None
    assert out.envelope["result"]["warning"]["kind"] == "missing_completion_report"
    assert "without a report" in out.envelope["summary_text"]
    assert list(jsonl.read(ctx.home.delivery_summaries)) == []
    assert ctx.agent.state().current_work_item_id == other["id"]  # another item stays current


def test_get_and_list(ctx):
    a, b = create(ctx, objective="a"), create(ctx, objective="b")
    call(ctx, "PickWorkItem", {"work_item_id": b["id"]})
    ctx.round_text = "report a"
    call(ctx, "CompleteWorkItem", {"work_item_id": a["id"]})
    got = call(ctx, "GetWorkItem", {"work_item_id": a["id"]}).envelope["result"]["work_item"]
    assert got["readiness"] == "completed" and got["completion_report"] == "report a"
    listed = call(ctx, "ListWorkItems", {}).envelope
    assert listed["summary_text"] == "1 work item(s)"
    assert listed["result"] == {
        "current_work_item_id": b["id"],
        "work_items": [
            {
                "id": b["id"],
                "objective": "b",
                "readiness": "current",
                "scheduling_state": "runnable",
                "plan_status": "draft",
                "blocked_by": None,
            }
        ],
    }
    everything = call(ctx, "ListWorkItems", {"include_completed": True}).envelope["result"]
    assert [w["id"] for w in everything["work_items"]] == [a["id"], b["id"]]


def test_guidance_mentions_the_report_rule():
    assert CreateWorkItem.guidance == GUIDANCE and "CompleteWorkItem" in GUIDANCE

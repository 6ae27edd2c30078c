"""SpawnAgent and AgentGet in process: argument checks, public_named, AgentGet's summary shape
and its visibility rule (self and descendants only)."""

from __future__ import annotations

import json

import pytest

from holon.agent.handle import Agent
from holon.home import registry
from holon.home.init import init_home
from holon.tasks.agentsummary import summary as agent_summary
from holon.tools import registry as tools
from holon.tools.agents import AgentGet
from holon.tools.base import ToolContext


def ctx_of(home) -> ToolContext:
    return ToolContext(agent=Agent(home), execution_root=home.root, cwd=home.root)


def call(ctx, name, args):
    out = tools.call(ctx, name, args)
    assert json.loads(json.dumps(out.envelope)) == out.envelope
    return out.envelope


@pytest.fixture
def parent():
    return init_home(None, "p")


def test_spawn_argument_errors(parent):
    ctx = ctx_of(parent)
    assert call(ctx, "SpawnAgent", {})["error"]["details"]["field"] == "initial_message"
    named = call(ctx, "SpawnAgent", {"preset": "public_named", "initial_message": "x"})
    assert named["error"]["details"]["field"] == "agent_id"
    for retired in ("summary", "prompt", "task_summary", "work_item"):
        env = call(ctx, "SpawnAgent", {"initial_message": "x", retired: "y"})
        assert env["error"]["kind"] == "invalid_tool_input"
    taken = call(ctx, "SpawnAgent", {"initial_message": "x", "agent_id": "p"})
    assert taken["error"]["kind"] == "agent_exists"


def test_public_named_returns_only_its_id(parent):
    ctx = ctx_of(parent)
    env = call(
        ctx,
        "SpawnAgent",
        {"preset": "public_named", "agent_id": "helper", "initial_message": "hello"},
    )
    assert env["status"] == "success" and env["result"] == {"agent_id": "helper"}
    home = registry.resolve("helper")
    ident = Agent(home).identity()
    assert ident["visibility"] == "public" and ident["ownership"] == "self_owned"
    assert ident["lineage_parent_agent_id"] == "p"
    (msg,) = home.queue.peek_all()
    assert msg["origin"] == {"kind": "system", "subsystem": "bootstrap"}
    assert msg["task_id"] is None  # bootstrap provenance, not a supervision task


def test_agent_get_self_child_and_refusal(parent):
    ctx = ctx_of(parent)
    spawned = call(ctx, "SpawnAgent", {"initial_message": "look around"})["result"]
    assert set(spawned) == {
        "agent_id",
        "child_agent_id",
        "supervision_task_id",
        "task_handle",
        "child_supervision",
    }
    me = call(ctx, AgentGet.name, {})["result"]["agent"]
    assert me == agent_summary(Agent(parent))
    assert me["identity"] == {
        "agent_id": "p",
        "agent_home": str(parent.root),
        "kind": "named",
        "visibility": "public",
        "ownership": "self_owned",
        "profile_preset": "public_named",
        "lineage_parent_agent_id": None,
    }
    assert me["loaded_agents_md"][0]["path"] == str(parent.agents_md)
    assert "content" not in me["loaded_agents_md"][0]
    (child,) = me["active_children"]
    assert child == spawned["child_supervision"]
    assert set(child) == {
        "child_agent_id",
        "supervision_task_id",
        "parent_agent_id",
        "cleanup_owner",
        "followup_target",
        "workspace_mode",
        "child_observability",
        "status",
        "child_status",
        "turns",
        "pending_messages",
        "last_brief",
        "last_activity_at",
        "workspace",
        "tokens",
    }
    got = call(ctx, "AgentGet", {"agent_id": spawned["child_agent_id"]})["result"]["agent"]
    assert got["identity"]["ownership"] == "parent_supervised"
    assert got["identity"]["lineage_parent_agent_id"] == "p"
    assert got["active_workspace"]["execution_root"] == str(parent.root)
    init_home(None, "other")
    refused = call(ctx, "AgentGet", {"agent_id": "other"})
    assert refused["error"]["kind"] == "agent_not_visible"
    child_ctx = ctx_of(registry.resolve(spawned["child_agent_id"]))
    assert call(child_ctx, "AgentGet", {"agent_id": "p"})["error"]["kind"] == "agent_not_visible"


def test_stop_archives_and_projection_follows(parent):
    ctx = ctx_of(parent)
    spawned = call(ctx, "SpawnAgent", {"initial_message": "wait"})["result"]
    task_id = spawned["supervision_task_id"]
    stopped = call(ctx, "TaskStop", {"task_id": task_id})["result"]
    assert stopped["task"]["status"] == "cancelled"
    sup = stopped["task"]["child_supervision"]
    assert sup["status"] == "cancelled" and sup["child_status"] == "archived"
    assert call(ctx, "AgentGet", {})["result"]["agent"]["active_children"] == []
    listed = call(ctx, "TaskList", {"include_finished": True})
    assert "child agent: wait" in json.dumps(listed)

"""holon.tasks.agentsummary: the one AgentSummary contract of AgentGet and `holon status`."""

from __future__ import annotations

import json

from scenario_helpers import cli

from holon.agent.handle import Agent
from holon.home.init import init_home
from holon.tasks import agentsummary
from holon.tools import registry as tools
from holon.tools.base import ToolContext


def _agent_get(home) -> dict:
    ctx = ToolContext(agent=Agent(home), execution_root=home.root, cwd=home.root)
    return tools.call(ctx, "AgentGet", {}).envelope["result"]["agent"]


def test_agent_get_and_status_share_one_summary():
    """Spec, Agent Inspection Surface Contract: `/state.agent` reuses the same agent summary
    contract as `/status`; Agent Identity And Visibility: AgentGet.identity exposes agent_id,
    agent_home, kind, visibility, ownership, profile_preset and lineage_parent_agent_id. So
    AgentGet's summary is `holon status --json` less the operator's sections, field for field."""
    parent = init_home(None, "p")
    ctx = ToolContext(agent=Agent(parent), execution_root=parent.root, cwd=parent.root)
    tools.call(ctx, "SpawnAgent", {"initial_message": "look around"})
    got = _agent_get(parent)
    code, out, err = cli("status", "p", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert got == {key: doc[key] for key in got}
    assert list(doc)[: len(got)] == list(got)  # the shared fields first, then the extras
    assert set(got["identity"]) >= {
        "agent_id",
        "agent_home",
        "kind",
        "visibility",
        "ownership",
        "profile_preset",
        "lineage_parent_agent_id",
    }
    assert got["identity"]["agent_home"] == str(parent.root)
    assert len(got["active_children"]) == 1
    assert got == agentsummary.summary(Agent(parent))  # the one builder

"""Spec (Command Family Tool Envelopes: child_observability and the child_supervision
projection; Agent Identity, inspection rules: AgentGet.active_children): one projection with the
spec's names in SpawnAgent, TaskStatus, TaskOutput, AgentGet and `holon status`."""

from __future__ import annotations

import json

from helpers import holon, init_agent, write_script

from holon.tasks.child import childview

SPAWN = {"tool_calls": [{"name": "SpawnAgent", "arguments": {"initial_message": "count"}}]}
FIELDS = {"parent_agent_id", "cleanup_owner", "followup_target", "child_observability"}
OBSERVED = {
    "phase",
    "blocked_reason",
    "waiting_reason",
    "active_work_item_id",
    "work_summary",
    "last_progress_brief",
    "last_result_brief",
}


def test_child_supervision_has_the_spec_fields_everywhere(tmp_path):
    parent = init_agent("p")
    holon("model", "set", "p", write_script(tmp_path / "p.jsonl", [SPAWN, {"text": "spawned"}]))
    holon("prompt", "p", "delegate")
    lines = (parent / ".holon/ledger/transcript.jsonl").read_text().splitlines()
    transcript = [json.loads(x) for x in lines]
    spawned = next(e["data"] for e in transcript if e["kind"] == "tool_result")
    sup = spawned["envelope"]["result"]["child_supervision"]
    assert FIELDS <= set(sup) and set(sup["child_observability"]) == OBSERVED
    assert (sup["parent_agent_id"], sup["cleanup_owner"], sup["followup_target"]) == (
        "p",
        "supervision_task",
        "parent_supervisor",
    )
    assert sup["child_observability"]["phase"] == "running"
    task_id = sup["supervision_task_id"]
    status = json.loads(holon("task", "status", "p", task_id, "--json").stdout)
    assert set(status["child_supervision"]) == set(sup)
    assert status["child_agent_id"] == sup["child_agent_id"]
    assert set(status["child_observability"]) == OBSERVED
    output = json.loads(holon("task", "output", "p", task_id, "--json").stdout)
    assert set(output["task"]["child_supervision"]) == set(sup)
    got = json.loads(holon("tool", "call", "p", "AgentGet", "--input", "{}").stdout)
    (child,) = got["result"]["agent"]["active_children"]
    assert set(child) == set(sup)
    (child,) = json.loads(holon("status", "p", "--json").stdout)["active_children"]
    assert (
        set(child)
        == set(sup)
        == set(
            childview.projection(
                json.loads((parent / ".holon/tasks" / task_id / "task.json").read_text())
            )
        )
    )  # the one builder

"""Spec (Command Family Tool Envelopes, child_supervision: `followup_target =
parent_supervisor`; a child's notify_operator is projected to the supervising parent boundary,
not to ordinary operator channels): a private child's NotifyOperator reaches its parent."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import holon, init_agent, write_script

from holon.tasks.child import childnotify

SPAWN = {"tool_calls": [{"name": "SpawnAgent", "arguments": {"initial_message": "count"}}]}
NOTIFY = {
    "tool_calls": [
        {
            "name": "NotifyOperator",
            "arguments": {"text": "need the password", "visibility": "action_required"},
        }
    ]
}


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_child_notification_is_routed_to_its_parent(tmp_path):
    parent = init_agent("p")
    rounds = [SPAWN, {"text": "spawned"}, {"text": "the child asks for a password"}]
    holon("model", "set", "p", write_script(tmp_path / "p.jsonl", rounds))
    holon("prompt", "p", "delegate")
    (task_dir,) = (parent / ".holon" / "tasks").iterdir()
    rec = json.loads((task_dir / "task.json").read_text())
    child_id = rec["child_agent_id"]
    child_rounds = [NOTIFY, {"text": "waiting"}]
    holon("model", "set", child_id, write_script(tmp_path / "c.jsonl", child_rounds))
    holon("tick", child_id)
    child = Path(rec["child_home"])
    (call,) = [
        e["data"]
        for e in _records(child / ".holon/ledger/transcript.jsonl")
        if e["kind"] == "tool_result"
    ]
    assert call["status"] == "success", call
    msgs = [m for m in _records(parent / ".holon/ledger/messages.jsonl") if m["task_id"]]
    (note,) = [m for m in msgs if m["kind"] == "internal_followup"]
    assert note["origin"] == {"kind": "system", "subsystem": childnotify.SOURCE}
    assert note["task_id"] == rec["id"] and note["priority"] == "next"
    assert (note["trust"], note["authority_class"]) == ("trusted_system", "runtime_instruction")
    value = note["body"]["value"]
    assert value["event"] == "child_notification" and value["child_agent_id"] == child_id
    assert value["text"] == "need the password" and value["visibility"] == "action_required"
    assert value["content_authority"] == "external_evidence"
    # not to the operator: the parent's briefs hold nothing from the child until its turn
    assert "need the password" not in (parent / ".holon/ledger/briefs.jsonl").read_text()
    # but the operator feed shows the escalation as the parent's, action_required
    feed = [json.loads(x) for x in holon("feed", "p", "--jsonl").stdout.splitlines()]
    (asks,) = [r for r in feed if r["source_event_kind"] == "child_escalated"]
    assert asks["visibility"] == "action_required" and asks["agent_id"] == "p"
    assert "need the password" in asks["summary"] and asks["provenance"]["task_id"] == rec["id"]
    holon("tick", "p")  # the parent's turn reads it
    briefs = _records(parent / ".holon/ledger/briefs.jsonl")
    assert briefs[-1]["text"] == "the child asks for a password"

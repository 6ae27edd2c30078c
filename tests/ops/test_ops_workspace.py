"""holon.ops.workspace: the operator's binding calls take the turn lock and record who bound."""

from __future__ import annotations

import json

import pytest

from holon.ops import workspace
from holon.store.locks import FileLock, LockBusy


def test_use_records_the_operator_and_lists(agent, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    bound = workspace.bind_for_run(agent, proj)
    assert bound["execution_root"] == str(proj.resolve())
    doc = workspace.listing(agent)
    assert doc["agent_id"] == "a" and doc["active"] == bound
    events = [json.loads(x) for x in agent.events.read_text().splitlines()]
    used = [e for e in events if e["kind"] == "workspace_used"]
    assert used[-1]["data"]["source"] == "operator"
    workspace.use(agent, workspace_id="agent_home")
    assert workspace.detach(agent, bound["workspace_id"])["detached"]


def test_a_held_turn_lock_refuses(agent, tmp_path):
    lock = FileLock(agent.turn_lock)
    lock.acquire(blocking=False)
    try:
        with pytest.raises(LockBusy):
            workspace.use(agent, path=tmp_path)
    finally:
        lock.release()

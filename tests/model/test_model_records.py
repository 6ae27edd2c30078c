"""holon.model.records: persisted records; state and records keep unknown fields."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from holon.model.conversation import TokenUsage
from holon.model.records import (
    AgentIdentity,
    AgentState,
    AgentStatus,
    AuditEvent,
    BriefRecord,
    FailureArtifact,
    TokenUsageSummary,
)


def test_agent_state_defaults():
    s = AgentState(id="a")
    assert s.status is AgentStatus.awake_idle
    assert s.schema_version == 1 and s.turn_index == 0 and s.pending == 0
    assert s.active_workspace_id == "agent_home"
    assert s.inflight == {} and s.active_task_ids == [] and s.token_usage_by_day == {}
    assert s.model_override is None and s.closure is None and s.last_turn is None
    assert s.token_usage == TokenUsageSummary()


def test_agent_state_mutable_defaults_are_not_shared():
    one, two = AgentState(id="a"), AgentState(id="b")
    one.active_task_ids.append("t")
    one.inflight["m"] = {"turn_id": "x"}
    one.token_usage.total_model_rounds = 3
    assert two.active_task_ids == [] and two.inflight == {}
    assert two.token_usage.total_model_rounds == 0


def test_agent_state_keeps_extra_fields():
    s = AgentState.model_validate({"id": "a", "status": "asleep", "from_the_future": {"x": 1}})
    assert s.status is AgentStatus.asleep
    assert s.model_dump(mode="json")["from_the_future"] == {"x": 1}


def test_agent_state_refuses_unknown_status():
    with pytest.raises(ValidationError):
        AgentState.model_validate({"id": "a", "status": "dreaming"})


def test_agent_state_json_roundtrip():
    s = AgentState(
        id="a",
        status="paused",
        paused_from="asleep",
        token_usage_by_day={"2027-01-15": 5},
        last_turn={"turn_index": 1, "completed_at": "t", "duration_ms": 3},
    )
    dumped = s.model_dump(mode="json")
    assert dumped["status"] == "paused" and dumped["last_turn"]["kind"] == "completed"
    assert AgentState.model_validate(dumped) == s


def test_token_usage_summary():
    summary = TokenUsageSummary()
    assert (
        summary.total == TokenUsage()
        and summary.total_model_rounds == 0
        and summary.last_turn is None
    )
    parsed = TokenUsageSummary.model_validate(
        {
            "total": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            "total_model_rounds": 2,
            "last_turn": {"input_tokens": 1},
        }
    )
    assert parsed.total.total_tokens == 7 and parsed.last_turn.input_tokens == 1
    assert parsed.last_turn.output_tokens == 0
    assert TokenUsageSummary().total is not TokenUsageSummary().total


def test_identity_literals():
    ident = AgentIdentity(agent_id="a", created_at="t")
    assert (ident.kind, ident.visibility, ident.ownership, ident.profile_preset) == (
        "named",
        "public",
        "self_owned",
        "public_named",
    )
    with pytest.raises(ValidationError):
        AgentIdentity(agent_id="a", created_at="t", visibility="secret")


def test_brief_and_event_records():
    brief = BriefRecord(id="b", agent_id="a", kind="result", created_at="t", text="done")
    assert brief.visibility == "turn_result"
    with pytest.raises(ValidationError):
        BriefRecord(id="b", agent_id="a", kind="gossip", created_at="t", text="x")
    event = AuditEvent(id="e", agent_id="a", event_seq=4, created_at="t", kind="k", later_field=1)
    assert event.data == {} and event.model_dump()["later_field"] == 1


def test_failure_artifact_category():
    assert FailureArtifact(summary="x").category == "unknown"
    with pytest.raises(ValidationError):
        FailureArtifact(summary="x", category="cosmic")

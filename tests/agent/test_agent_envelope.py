"""The stdlib admission record (holon.agent.envelope) is exactly MessageEnvelope's JSON dump, and
refuses what the model refuses."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from holon.agent import envelope
from holon.model.messages import MessageEnvelope

BASE = {
    "id": "msg_0000000000000001",
    "agent_id": "a",
    "created_at": "2026-01-01T00:00:00.000Z",
    "kind": "channel_event",
    "origin": {"kind": "channel", "channel_id": "c", "sender_id": None},
    "trust": "untrusted_external",
    "authority_class": "external_evidence",
    "priority": "normal",
    "trigger_kind": "external_event",
    "work_item_id": None,
    "task_id": None,
    "source_refs": {},
    "body": {"type": "text", "text": "hi"},
    "metadata": None,
    "delivery_surface": "http_public_enqueue",
    "admission_context": "local_process",
    "correlation_id": None,
    "causation_id": None,
    "model_ref": None,
}

VALID = [
    {},
    {"priority": "interject", "model_ref": "scripted/x.jsonl", "work_item_id": "wi_1"},
    {"body": {"text": "ünïcode\nlines", "type": "text"}},
    {"body": {"type": "json", "value": {"k": [1, 2.5, None, True, {"n": "x"}]}}},
    {"body": {"type": "json", "value": None}},
    {"body": {"type": "brief", "text": "t"}},
    {"body": {"type": "brief", "title": "T", "text": "t", "attachments": [{"uri": "u"}]}},
    {"origin": {"kind": "operator", "actor_id": None}, "kind": "operator_prompt"},
    {"origin": {"kind": "webhook", "source": "gh", "event_type": "push"}},
    {"origin": {"kind": "callback", "descriptor_id": "d"}},
    {"origin": {"kind": "timer", "timer_id": "t1"}},
    {"origin": {"kind": "system", "subsystem": "runtime"}},
    {"origin": {"kind": "task", "task_id": "task_1"}, "task_id": "task_1"},
    {"source_refs": {"task_id": "task_1"}, "metadata": {"a": {"b": 1}}},
    {"correlation_id": "c", "causation_id": "msg_x"},
]

INVALID = [
    {"priority": "urgent"},
    {"body": {"type": "text"}},
    {"body": {"type": "text", "text": 5}},
    {"body": {"type": "text", "text": "x", "extra": 1}},
    {"body": {"type": "json"}},
    {"body": {"type": "html", "text": "x"}},
    {"body": "text"},
    {"body": {"type": "brief", "text": "t", "attachments": [{"uri": "u", "x": 1}]}},
    {"body": {"type": "brief", "text": "t", "attachments": "u"}},
    {"origin": {"kind": "channel"}},
    {"origin": {"kind": "channel", "channel_id": "c", "extra": "x"}},
    {"origin": {"kind": "channel", "channel_id": 5}},
    {"origin": {"kind": "elsewhere"}},
    {"source_refs": {"k": 1}},
    {"metadata": ["not", "an", "object"]},
    {"work_item_id": 3},
]


@pytest.mark.parametrize("change", VALID)
def test_the_record_is_the_model_dump(change):
    fields = {**BASE, **change}
    ours = envelope.record(**fields)
    theirs = MessageEnvelope(**fields).model_dump(mode="json")
    assert ours == theirs
    assert list(ours) == list(theirs)  # the same key order: the same ledger line
    assert list(ours["body"]) == list(theirs["body"])
    assert list(ours["origin"]) == list(theirs["origin"])


@pytest.mark.parametrize("change", INVALID)
def test_what_the_model_refuses_is_refused(change):
    fields = {**BASE, **change}
    with pytest.raises(ValidationError):
        MessageEnvelope(**fields)
    with pytest.raises(ValueError):
        envelope.record(**fields)

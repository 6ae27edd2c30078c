"""holon.model.messages: the MessageEnvelope (discriminated origin and body, no extra fields)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from holon.model.messages import (
    BriefBody,
    CallbackOrigin,
    ChannelOrigin,
    JsonBody,
    MessageEnvelope,
    Priority,
    TaskOrigin,
    TextBody,
)


def _env(**over):
    data = {
        "id": "msg_1",
        "agent_id": "a",
        "created_at": "2027-01-15T08:00:00.000Z",
        "kind": "channel_event",
        "origin": {"kind": "channel", "channel_id": "slack"},
        "trust": "untrusted_external",
        "authority_class": "external_evidence",
        "body": {"type": "text", "text": "hello"},
    }
    data.update(over)
    return MessageEnvelope.model_validate(data)


def test_minimal_envelope_and_defaults():
    env = _env()
    assert isinstance(env.origin, ChannelOrigin) and env.origin.channel_id == "slack"
    assert env.origin.sender_id is None
    assert isinstance(env.body, TextBody)
    assert env.priority is Priority.normal and env.schema_version == 1
    assert env.source_refs == {} and env.delivery_attempts == 0
    assert env.delivery_surface is None and env.admission_context is None


def test_json_roundtrip():
    env = _env(
        priority="interject",
        delivery_surface="cli_prompt",
        admission_context="local_process",
        source_refs={"task_id": "t1"},
        metadata={"k": [1, 2]},
    )
    dumped = env.model_dump(mode="json")
    assert dumped["priority"] == "interject" and dumped["kind"] == "channel_event"
    assert MessageEnvelope.model_validate(json.loads(json.dumps(dumped))) == env


@pytest.mark.parametrize(
    "origin, cls",
    [
        ({"kind": "callback", "descriptor_id": "trg_1"}, CallbackOrigin),
        ({"kind": "task", "task_id": "task_1"}, TaskOrigin),
        ({"kind": "channel", "channel_id": "c", "sender_id": "u"}, ChannelOrigin),
    ],
)
def test_origin_is_discriminated_by_kind(origin, cls):
    assert type(_env(origin=origin).origin) is cls


@pytest.mark.parametrize(
    "origin",
    [
        {"kind": "channel"},  # channel_id is required
        {"kind": "martian", "channel_id": "c"},  # unknown discriminator
        {"channel_id": "c"},  # no discriminator
        {"kind": "task", "channel_id": "c"},  # fields of another origin
        {"kind": "operator", "actor_id": "me", "trust": "trusted_operator"},  # extra field
    ],
)
def test_invalid_origins_are_refused(origin):
    with pytest.raises(ValidationError):
        _env(origin=origin)


@pytest.mark.parametrize(
    "body",
    [
        {"type": "html", "text": "<b>"},
        {"type": "text"},
        {"type": "text", "text": "x", "extra": 1},
        {"text": "no type"},
        {"type": "brief", "title": "t"},  # brief needs text
    ],
)
def test_invalid_bodies_are_refused(body):
    with pytest.raises(ValidationError):
        _env(body=body)


def test_extra_top_level_fields_are_forbidden():
    with pytest.raises(ValidationError) as err:
        _env(sneaky="x")
    assert "sneaky" in str(err.value)


@pytest.mark.parametrize(
    "field, value",
    [
        ("kind", "gossip"),
        ("trust", "trusted_everyone"),
        ("authority_class", "root"),
        ("priority", "urgent"),
        ("delivery_surface", "carrier_pigeon"),
    ],
)
def test_enum_fields_are_closed(field, value):
    with pytest.raises(ValidationError):
        _env(**{field: value})


def test_body_text_for_text_json_and_brief():
    assert _env().body_text() == "hello"
    env = _env(body={"type": "json", "value": {"b": "é", "a": [1]}})
    assert isinstance(env.body, JsonBody)
    assert env.body_text() == '{\n  "b": "é",\n  "a": [\n    1\n  ]\n}'
    assert _env(body={"type": "json", "value": None}).body_text() == "null"
    brief = _env(
        body={
            "type": "brief",
            "title": "Done",
            "text": "All good",
            "attachments": [{"uri": "file:///x"}],
        }
    )
    assert isinstance(brief.body, BriefBody)
    assert brief.body_text() == "Done\n\nAll good"
    assert _env(body={"type": "brief", "text": "untitled"}).body_text() == "untitled"

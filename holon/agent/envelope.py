"""The admitted message record, built and checked with the standard library only.

Admission runs in short-lived `holon enqueue` / `holon prompt --no-wait` processes, where importing
pydantic would cost more than the rest of the command. `record` produces exactly what
`MessageEnvelope(...).model_dump(mode="json")` (holon.model.messages) would: the same keys in the
same order, the same defaults, and a refusal (ValueError) for what that model refuses. The tick
still validates every claimed record with the model; tests/agent/test_envelope.py holds the two
together.
"""

from __future__ import annotations

from typing import Any

from holon.vocab import PRIORITIES, SCHEMA_VERSION

# origin kind -> (required string fields, optional string fields), in the model's field order
ORIGINS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "operator": ((), ("actor_id",)),
    "channel": (("channel_id",), ("sender_id",)),
    "webhook": (("source",), ("event_type",)),
    "callback": (("descriptor_id",), ("source",)),
    "timer": (("timer_id",), ()),
    "system": (("subsystem",), ()),
    "task": (("task_id",), ()),
}


def record(
    *,
    id: str,
    agent_id: str,
    created_at: str,
    kind: str,
    origin: dict[str, Any],
    trust: str,
    authority_class: str,
    priority: str,
    trigger_kind: str | None,
    work_item_id: str | None,
    task_id: str | None,
    source_refs: dict[str, str],
    body: dict[str, Any],
    metadata: dict[str, Any] | None,
    delivery_surface: str,
    admission_context: str,
    correlation_id: str | None,
    causation_id: str | None,
    model_ref: str | None,
) -> dict[str, Any]:
    """The envelope record of a new message (kind, trust, authority, surface and context come from
    admission's own table and are not checked again); ValueError names the first problem."""
    if priority not in PRIORITIES:
        raise ValueError(f"priority: input should be one of {', '.join(PRIORITIES)}")
    for name, value in (
        ("work_item_id", work_item_id),
        ("task_id", task_id),
        ("correlation_id", correlation_id),
        ("causation_id", causation_id),
        ("model_ref", model_ref),
        ("trigger_kind", trigger_kind),
    ):
        _optional_str(name, value)
    if not isinstance(source_refs, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in source_refs.items()
    ):
        raise ValueError("source_refs: input should be an object of strings")
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata)
    ):
        raise ValueError("metadata: input should be a valid dictionary")
    return {
        "schema_version": SCHEMA_VERSION,
        "id": id,
        "agent_id": agent_id,
        "created_at": created_at,
        "kind": kind,
        "origin": _origin(origin),
        "trust": trust,
        "authority_class": authority_class,
        "priority": priority,
        "trigger_kind": trigger_kind,
        "work_item_id": work_item_id,
        "task_id": task_id,
        "source_refs": dict(source_refs),
        "body": _body(body),
        "metadata": None if metadata is None else dict(metadata),
        "delivery_surface": delivery_surface,
        "admission_context": admission_context,
        "correlation_id": correlation_id,
        "causation_id": causation_id,
        "delivery_attempts": 0,
        "model_ref": model_ref,
        "provider_retries": 0,
        "not_before": None,
        "seal": None,
    }


def _optional_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name}: input should be a valid string")


def _origin(origin: dict[str, Any]) -> dict[str, Any]:
    kind = origin.get("kind")
    if kind not in ORIGINS:
        raise ValueError("origin: unknown origin kind")
    required, optional = ORIGINS[kind]
    extra = set(origin) - {"kind", *required, *optional}
    if extra:
        raise ValueError(f"origin.{sorted(extra)[0]}: extra inputs are not permitted")
    out: dict[str, Any] = {"kind": kind}
    for name in (*required, *optional):
        value = origin.get(name)
        if value is None and name in required:
            raise ValueError(f"origin.{name}: field required")
        _optional_str(f"origin.{name}", value)
        out[name] = value
    return out


def _body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ValueError("body: input should be a valid dictionary")
    kind = body.get("type")
    if kind == "text":
        _fields(body, {"type", "text"}, "body")
        return {"type": "text", "text": _required_str(body, "text", "body")}
    if kind == "json":
        _fields(body, {"type", "value"}, "body")
        if "value" not in body:
            raise ValueError("body.value: field required")
        return {"type": "json", "value": body["value"]}
    if kind == "brief":
        _fields(body, {"type", "title", "text", "attachments"}, "body")
        _optional_str("body.title", body.get("title"))
        return {
            "type": "brief",
            "title": body.get("title"),
            "text": _required_str(body, "text", "body"),
            "attachments": _attachments(body.get("attachments")),
        }
    raise ValueError("body: input tag does not match any of 'text', 'json', 'brief'")


def _attachments(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("body.attachments: input should be a valid list")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"body.attachments.{i}: input should be a valid dictionary")
        _fields(item, {"uri", "value"}, f"body.attachments.{i}")
        _optional_str(f"body.attachments.{i}.uri", item.get("uri"))
        out.append({"uri": item.get("uri"), "value": item.get("value")})
    return out


def _fields(node: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = set(node) - allowed
    if extra:
        raise ValueError(f"{where}.{sorted(extra)[0]}: extra inputs are not permitted")


def _required_str(node: dict[str, Any], name: str, where: str) -> str:
    if name not in node:
        raise ValueError(f"{where}.{name}: field required")
    value = node[name]
    if not isinstance(value, str):
        raise ValueError(f"{where}.{name}: input should be a valid string")
    return value

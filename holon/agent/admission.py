"""Admission: the only place provenance is decided. Callers name an ingress, never a trust level.

ingress     kind               origin    trust                authority
cli_prompt  operator_prompt    operator  trusted_operator     operator_instruction
run_once    operator_prompt    operator  trusted_operator     operator_instruction
enqueue     channel_event      channel   untrusted_external   external_evidence
enqueue     webhook_event      webhook   trusted_integration  integration_signal
enqueue     timer_tick         timer     trusted_system       runtime_instruction
enqueue     system_tick        system    trusted_system       runtime_instruction
trigger     system_tick        callback  trusted_integration  integration_signal
timer       timer_tick         timer     trusted_system       runtime_instruction
runtime     system_tick        system    trusted_system       runtime_instruction
task        task_result        task      trusted_system       runtime_instruction
followup    internal_followup  system    trusted_system       runtime_instruction

ingress     kind               surface              context
cli_prompt  operator_prompt    cli_prompt           local_process
run_once    operator_prompt    run_once             local_process
enqueue     channel_event      http_public_enqueue  local_process
enqueue     webhook_event      http_webhook         local_process
enqueue     timer_tick         timer_scheduler      local_process
enqueue     system_tick        runtime_system       local_process
trigger     system_tick        http_callback_wake   external_trigger_capability
timer       timer_tick         timer_scheduler      runtime_owned
runtime     system_tick        runtime_system       runtime_owned
task        task_result        task_rejoin          runtime_owned
followup    internal_followup  runtime_system       runtime_owned
"""

from __future__ import annotations

import json
from typing import Any

from holon import clock, config, vocab
from holon.agent import envelope, seal
from holon.agent.handle import Agent
from holon.errors import InvalidInput, NotRunnable, UsageError
from holon.home import dueindex, settings
from holon.home.layout import Home
from holon.ids import new_id
from holon.safetext import one_line
from holon.store import jsonl

DEFAULT_MAX_BODY_BYTES = 256 * 1024
EXTERNAL_INGRESS = {"cli_prompt", "run_once", "enqueue", "trigger"}
TEXT_CHECKED_INGRESS = {"cli_prompt", "run_once", "enqueue"}  # an empty text body is refused

_TRIGGER_KIND = {
    "operator_prompt": "operator_input",
    "channel_event": "external_event",
    "webhook_event": "external_event",
    "callback_event": "external_event",
    "timer_tick": "timer_fire",
    "system_tick": "system_tick",
    "task_result": "task_result",
    "task_status": "task_status",
    "control": "control",
    "brief_ack": "brief",
    "brief_result": "brief",
    "internal_followup": "internal_followup",
}

_PROFILES: dict[tuple[str, str], tuple[str, str, str, str]] = {
    ("cli_prompt", "operator_prompt"): (
        "trusted_operator",
        "operator_instruction",
        "cli_prompt",
        "local_process",
    ),
    ("run_once", "operator_prompt"): (
        "trusted_operator",
        "operator_instruction",
        "run_once",
        "local_process",
    ),
    ("enqueue", "channel_event"): (
        "untrusted_external",
        "external_evidence",
        "http_public_enqueue",
        "local_process",
    ),
    ("enqueue", "webhook_event"): (
        "trusted_integration",
        "integration_signal",
        "http_webhook",
        "local_process",
    ),
    ("enqueue", "timer_tick"): (
        "trusted_system",
        "runtime_instruction",
        "timer_scheduler",
        "local_process",
    ),
    ("enqueue", "system_tick"): (
        "trusted_system",
        "runtime_instruction",
        "runtime_system",
        "local_process",
    ),
    ("trigger", "system_tick"): (
        "trusted_integration",
        "integration_signal",
        "http_callback_wake",
        "external_trigger_capability",
    ),
    ("timer", "timer_tick"): (
        "trusted_system",
        "runtime_instruction",
        "timer_scheduler",
        "runtime_owned",
    ),
    ("runtime", "system_tick"): (
        "trusted_system",
        "runtime_instruction",
        "runtime_system",
        "runtime_owned",
    ),
    # runtime-owned rejoin (spec: Background Task Model); the command output or child report
    # inside stays evidence (holon.tasks.results labels it, content_authority)
    ("task", "task_result"): (
        "trusted_system",
        "runtime_instruction",
        "task_rejoin",
        "runtime_owned",
    ),
    ("task", "task_status"): (
        "trusted_system",
        "runtime_instruction",
        "task_rejoin",
        "runtime_owned",
    ),
    ("followup", "internal_followup"): (
        "trusted_system",
        "runtime_instruction",
        "runtime_system",
        "runtime_owned",
    ),
}


def max_body_bytes() -> int:
    return config.env_int(
        "HOLON_MAX_MESSAGE_BYTES", "runtime.max_message_bytes", DEFAULT_MAX_BODY_BYTES
    )


def _label(value: Any) -> Any:
    """An origin label from outside (source, sender, event type) as one bounded line."""
    return one_line(value) if isinstance(value, str) else value


def _origin(ingress: str, kind: str, source: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    source = _label(source)
    extra = {k: _label(v) for k, v in extra.items()}
    if ingress in ("cli_prompt", "run_once"):
        return {"kind": "operator", "actor_id": source}
    if kind == "channel_event":
        return {
            "kind": "channel",
            "channel_id": source or "cli",
            "sender_id": extra.get("sender_id"),
        }
    if kind == "webhook_event":
        return {"kind": "webhook", "source": source or "cli", "event_type": extra.get("event_type")}
    if ingress == "trigger":
        return {"kind": "callback", "descriptor_id": extra["descriptor_id"], "source": source}
    if kind == "timer_tick":
        return {"kind": "timer", "timer_id": source or "external"}
    if kind in ("task_result", "task_status"):
        return {"kind": "task", "task_id": extra["task_id"]}
    return {
        "kind": "system",
        "subsystem": source or ("followup" if ingress == "followup" else "runtime"),
    }


def check_body(body: dict[str, Any]) -> None:
    size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    if size > max_body_bytes():
        raise InvalidInput(
            f"message body is {size} bytes, more than the limit of {max_body_bytes()}",
            kind="oversize_body",
            hint="send a shorter body, or write the payload to a file "
            "and send its path (limit: runtime.max_message_bytes)",
        )


def check_text(body: dict[str, Any], ingress: str) -> None:
    """An operator prompt or an enqueued text body must say something."""
    if body.get("type") != "text" or str(body.get("text") or "").strip():
        return
    hint = (
        "pass non-empty --text, or --json-body"
        if ingress == "enqueue"
        else "give the prompt text as an argument, or `-` to read it from stdin"
    )
    raise UsageError("the message text is empty", kind="empty_prompt", hint=hint)


def admit(
    home: Home,
    ingress: str,
    kind: str,
    body: dict[str, Any],
    *,
    source: str | None = None,
    priority: str = vocab.DEFAULT_PRIORITY,
    metadata: dict[str, Any] | None = None,
    correlation_id: str | None = None,
    causation_id: str | None = None,
    work_item_id: str | None = None,
    task_id: str | None = None,
    source_refs: dict[str, str] | None = None,
    model_ref: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Validate, derive provenance, log, and queue one message. Returns the admitted envelope.

    `model_ref` is the model an operator chose for this message, or the one the turn that caused
    it ran with (see MessageEnvelope.model_ref)."""
    profile = _PROFILES.get((ingress, kind))
    if profile is None:
        valid = ", ".join(k for (i, k) in _PROFILES if i == ingress) or "none"
        raise UsageError(
            f"kind {kind!r} cannot be admitted through {ingress}",
            kind="invalid_message_kind",
            hint=f"valid kinds here: {valid}",
        )
    if ingress in EXTERNAL_INGRESS:
        check_runnable(home)
    if ingress in TEXT_CHECKED_INGRESS:
        check_text(body, ingress)
    check_body(body)
    trust, authority, surface, context = profile
    refs = dict(source_refs or {})
    if task_id:
        refs.setdefault("task_id", task_id)
    try:  # the record MessageEnvelope would dump, without importing pydantic (holon.agent.envelope)
        record = envelope.record(
            id=new_id("msg"),
            agent_id=home.agent_id,
            created_at=clock.now_iso(),
            kind=kind,
            origin=_origin(ingress, kind, source, {**extra, "task_id": task_id}),
            trust=trust,
            authority_class=authority,
            priority=priority,
            trigger_kind=_TRIGGER_KIND[kind],
            work_item_id=work_item_id,
            task_id=task_id,
            source_refs=refs,
            body=body,
            metadata=metadata,
            delivery_surface=surface,
            admission_context=context,
            correlation_id=correlation_id,
            causation_id=causation_id,
            model_ref=model_ref or None,
        )
    except ValueError as exc:
        raise InvalidInput(
            f"malformed message: {exc}".splitlines()[0],
            kind="invalid_message",
            hint="check the message body and priority",
        ) from None
    agent = Agent(home)
    with agent.state_lock():
        record["seal"] = seal.seal(home, record)  # what admission decided, for verify at claim
        # the queue file is the admission (it is what runs); the ledger logs it after, so a crash
        # between the two never logs a message that is not queued
        dueindex.mark(home.root)  # before and after the queue file: early, never late
        home.queue.put(record, priority)
        dueindex.mark(home.root)
        jsonl.append(home.messages, record)
    agent.event(
        "message_admitted",
        message_id=record["id"],
        message_kind=kind,
        origin=record["origin"],
        trust=trust,
        authority_class=authority,
        priority=priority,
        delivery_surface=surface,
        admission_context=context,
        task_id=task_id,
        work_item_id=work_item_id,
    )
    return record


def check_runnable(home: Home) -> None:
    state = settings.lenient(home)  # the run state with the operator's settings applied
    if state.get("status") == "stopped":
        raise NotRunnable(
            f"agent {home.agent_id} is stopped and does not accept new messages",
            kind="agent_stopped",
            hint=f"run `holon resume {home.agent_id}` first; "
            "`holon wake` does not cross the stopped boundary",
        )


def text_body(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}

"""MessageEnvelope and its enums: kinds, origins, trust, authority, priority, surfaces, bodies."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from holon import vocab

SCHEMA_VERSION = vocab.SCHEMA_VERSION

# the kinds and priorities are spelled once, in holon.vocab; a member is named as its value
MessageKind = Enum("MessageKind", [(k, k) for k in vocab.MESSAGE_KINDS], module=__name__, type=str)


class TrustLevel(str, Enum):
    trusted_operator = "trusted_operator"
    trusted_system = "trusted_system"
    trusted_integration = "trusted_integration"
    untrusted_external = "untrusted_external"


class AuthorityClass(str, Enum):
    operator_instruction = "operator_instruction"
    runtime_instruction = "runtime_instruction"
    integration_signal = "integration_signal"
    external_evidence = "external_evidence"


Priority = Enum("Priority", [(p, p) for p in vocab.PRIORITIES], module=__name__, type=str)


class MessageDeliverySurface(str, Enum):
    cli_prompt = "cli_prompt"
    run_once = "run_once"
    http_public_enqueue = "http_public_enqueue"
    http_webhook = "http_webhook"
    http_callback_enqueue = "http_callback_enqueue"
    http_callback_wake = "http_callback_wake"
    http_control_prompt = "http_control_prompt"
    timer_scheduler = "timer_scheduler"
    runtime_system = "runtime_system"
    task_rejoin = "task_rejoin"


class AdmissionContext(str, Enum):
    public_unauthenticated = "public_unauthenticated"
    control_authenticated = "control_authenticated"
    external_trigger_capability = "external_trigger_capability"
    local_process = "local_process"
    runtime_owned = "runtime_owned"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OperatorOrigin(_Strict):
    kind: Literal["operator"] = "operator"
    actor_id: str | None = None


class ChannelOrigin(_Strict):
    kind: Literal["channel"] = "channel"
    channel_id: str
    sender_id: str | None = None


class WebhookOrigin(_Strict):
    kind: Literal["webhook"] = "webhook"
    source: str
    event_type: str | None = None


class CallbackOrigin(_Strict):
    kind: Literal["callback"] = "callback"
    descriptor_id: str
    source: str | None = None


class TimerOrigin(_Strict):
    kind: Literal["timer"] = "timer"
    timer_id: str


class SystemOrigin(_Strict):
    kind: Literal["system"] = "system"
    subsystem: str


class TaskOrigin(_Strict):
    kind: Literal["task"] = "task"
    task_id: str


MessageOrigin = Annotated[
    OperatorOrigin
    | ChannelOrigin
    | WebhookOrigin
    | CallbackOrigin
    | TimerOrigin
    | SystemOrigin
    | TaskOrigin,
    Field(discriminator="kind"),
]


class BriefAttachment(_Strict):
    uri: str | None = None
    value: Any = None


class TextBody(_Strict):
    type: Literal["text"] = "text"
    text: str


class JsonBody(_Strict):
    type: Literal["json"] = "json"
    value: Any


class BriefBody(_Strict):
    type: Literal["brief"] = "brief"
    title: str | None = None
    text: str
    attachments: list[BriefAttachment] | None = None


MessageBody = Annotated[TextBody | JsonBody | BriefBody, Field(discriminator="type")]


class MessageEnvelope(_Strict):
    """Every queued input, normalised. Provenance fields are set by admission only."""

    schema_version: int = SCHEMA_VERSION
    id: str
    agent_id: str
    created_at: str
    kind: MessageKind
    origin: MessageOrigin
    trust: TrustLevel
    authority_class: AuthorityClass
    priority: Priority = Priority(vocab.DEFAULT_PRIORITY)
    trigger_kind: str | None = None
    work_item_id: str | None = None
    task_id: str | None = None
    source_refs: dict[str, str] = Field(default_factory=dict)
    body: MessageBody
    metadata: dict[str, Any] | None = None
    delivery_surface: MessageDeliverySurface | None = None
    admission_context: AdmissionContext | None = None
    correlation_id: str | None = None
    causation_id: str | None = None
    delivery_attempts: int = 0
    # the model an operator chose for this message (`--model`); the messages its turn causes carry
    # it too. Precedence when it runs: a tick's --model, this, the agent's override, the default
    model_ref: str | None = None
    # a provider outage deferred the message this many times; it is not claimed before not_before
    # (ISO-8601, also carried in its queue file name, see holon.store.queue)
    provider_retries: int = 0
    not_before: str | None = None
    # admission's HMAC over the fields it alone decides (holon.agent.admission.verify)
    seal: str | None = None

    def body_text(self) -> str:
        """The body as text for the model: text as is, JSON pretty-printed, brief with its title."""
        body = self.body
        if isinstance(body, TextBody):
            return body.text
        if isinstance(body, BriefBody):
            return f"{body.title}\n\n{body.text}" if body.title else body.text
        import json

        return json.dumps(body.value, ensure_ascii=False, indent=2)

"""The tool contract: typed arguments, a complete output, a family projector and renderer.

A tool is a class with a pydantic `Args` model (the single source of its
schema), a `run(ctx, args) -> ToolOutput` that returns the complete output or
raises ToolFailure, and optionally `project` (complete output -> bounded
canonical result, writing large payloads to artifacts) and `render`
(canonical envelope -> model-visible receipt).

A tool that needs the runtime to do something after the turn (sleep, bind the
brief to a completed work item) says so in `ToolOutput.effects`, typed data
beside the result: the runtime applies it when it settles the turn, and it is
never part of the envelope the model sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.model.conversation import ToolDefinition


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown fields are rejected, never silently ignored; types
    are strict (no `true` for an integer, no `"5"` for a number); no string holds a NUL unless
    its field is named in `nul_ok`."""

    model_config = ConfigDict(extra="forbid", strict=True)
    nul_ok: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and "\x00" in value and info.field_name not in cls.nul_ok:
            raise ValueError("must not contain a NUL character")
        return value


MAX_QUOTED = 200  # characters of any one string an error quotes (an input can be megabytes)


def bounded(value: Any, limit: int = MAX_QUOTED) -> Any:
    """`value` with every string longer than `limit` cut (an error never echoes a whole input)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, dict):
        return {bounded(k, limit): bounded(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded(v, limit) for v in value]
    return value


class ToolFailure(Exception):
    """A tool error with the spec's envelope fields."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        recovery_hint: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details
        self.recovery_hint = recovery_hint
        self.retryable = retryable

    def to_error(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": bounded(self.message, 2 * MAX_QUOTED),
            "details": bounded(self.details),
            "recovery_hint": bounded(self.recovery_hint, 4 * MAX_QUOTED),
            "retryable": self.retryable,
        }


class SleepEffect(BaseModel):
    """End the turn asleep; with `until`, a timer named `sleep` wakes the agent then."""

    model_config = ConfigDict(extra="forbid")
    until: str | None = None
    reason: str | None = None
    duration_ms: int | None = None


class CompletionEffect(BaseModel):
    """A work item was completed with a report: it becomes the turn's brief (visibility
    work_done)."""

    model_config = ConfigDict(extra="forbid")
    work_item_id: str
    report: str


class ToolEffects(BaseModel):
    """What successful calls ask of the runtime; applied at settle, never shown to the model."""

    model_config = ConfigDict(extra="forbid")
    sleep: SleepEffect | None = None
    completion: CompletionEffect | None = None

    def merged(self, later: ToolEffects) -> ToolEffects:
        """The effects of two calls in order: a later call's field replaces an earlier one's."""
        return self.model_copy(update={k: v for k, v in later if v is not None})

    def to_record(self) -> dict[str, Any] | None:
        """What the transcript keeps (None when the call asked nothing)."""
        data = self.model_dump(exclude_none=True)
        return data or None


@dataclass
class ToolOutput:
    """The complete output of a successful call (before projection)."""

    summary_text: str
    result: dict[str, Any]
    effects: ToolEffects | None = None


@dataclass
class CallOutcome:
    """One finished call: the canonical envelope (stored), its receipt (shown), its effects
    (applied)."""

    envelope: dict[str, Any]
    rendered: str
    effects: ToolEffects | None = None


@dataclass
class RenderPolicy:
    """Model-visible budgets: estimated tokens (4 chars each) for one tool result."""

    default_tokens: int = 8000
    max_tokens: int = 64000

    def budget_chars(self, requested_tokens: int | None = None) -> int:
        tokens = requested_tokens or self.default_tokens
        return max(1, min(tokens, self.max_tokens)) * 4


@dataclass
class ToolContext:
    """What a tool may touch: the agent, its execution root, and the turn it runs in."""

    agent: Agent
    execution_root: Path
    cwd: Path
    policy: RenderPolicy = field(default_factory=RenderPolicy)
    tool_call_id: str = ""
    turn_id: str = ""
    message_id: str | None = None
    round_text: str = ""  # assistant text of the round that made this call

    @property
    def home(self) -> Home:
        return self.agent.home


class Tool:
    """Base class of built-in tools."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    family: ClassVar[str] = "misc"
    # a mutation cut off by an output-token limit is never executed
    mutates: ClassVar[bool] = False
    # exposed as a freeform grammar tool on Responses transports (ApplyPatch)
    freeform_grammar: ClassVar[str | None] = None
    # what else tells two tools of one class and name apart in a catalog (an MCP tool's schema)
    fingerprint: str = ""

    def provider_definition(self, mode: str) -> ToolDefinition | None:
        """The definition when the tool has no `Args` schema of its own (MCP tools), else None."""
        return None

    def validate(self, ctx: ToolContext, args: ToolArgs) -> None:
        """Semantic validation after the typed parse; raise ToolFailure."""

    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolOutput:
        raise ToolFailure("tool_unavailable", f"{self.name} cannot run here")

    def project(self, ctx: ToolContext, output: ToolOutput) -> dict[str, Any]:
        """Complete result -> bounded canonical result. Default: unchanged."""
        return output.result

    def render(self, envelope: dict[str, Any], policy: RenderPolicy) -> str:
        """Canonical envelope -> model-visible receipt. Default: summary plus compact JSON."""
        result = envelope.get("result")
        if not result:
            return envelope.get("summary_text", "")
        return (
            envelope.get("summary_text", "")
            + "\n"
            + json.dumps(result, ensure_ascii=False, indent=1)
        )

    def parse_freeform(self, raw: str) -> dict[str, Any]:
        """Turn a freeform (custom tool) payload into arguments."""
        raise ToolFailure("invalid_tool_input", f"{self.name} does not accept freeform input")

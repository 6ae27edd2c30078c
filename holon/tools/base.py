"""The tool contract: typed arguments, a complete output, a family projector and renderer.

A tool is a class with a pydantic `Args` model (the single source of its
schema), a `run(ctx, args) -> ToolOutput` that returns the complete output or
raises ToolFailure, and optionally `project` (complete output -> bounded
canonical result, writing large payloads to artifacts) and `render`
(canonical envelope -> model-visible receipt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown fields are rejected, never silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ToolFailure(Exception):
    """A tool error with the spec's envelope fields."""

    def __init__(self, kind: str, message: str, *, details: dict[str, Any] | None = None,
                 recovery_hint: str | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details
        self.recovery_hint = recovery_hint
        self.retryable = retryable

    def to_error(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "details": self.details,
                "recovery_hint": self.recovery_hint, "retryable": self.retryable}


@dataclass
class ToolOutput:
    """The complete output of a successful call (before projection)."""

    summary_text: str
    result: dict[str, Any]


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

    agent_id: str
    home: Path  # the agent home directory
    execution_root: Path
    cwd: Path
    policy: RenderPolicy = field(default_factory=RenderPolicy)
    tool_call_id: str = ""
    turn_id: str = ""
    message_id: str | None = None
    round_text: str = ""  # assistant text of the round that made this call
    clock: Any = None  # holon.clock.Clock; None means wall time
    # turn-level effects a tool requests from the runtime (sleep, completed work items ...)
    effects: dict[str, Any] = field(default_factory=dict)

    @property
    def state_dir(self) -> Path:
        return self.home / ".holon"

    @property
    def artifacts_dir(self) -> Path:
        return self.home / ".holon" / "artifacts"


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
        return envelope.get("summary_text", "") + "\n" + json.dumps(result, ensure_ascii=False, indent=1)

    def parse_freeform(self, raw: str) -> dict[str, Any]:
        """Turn a freeform (custom tool) payload into arguments."""
        raise ToolFailure("invalid_tool_input", f"{self.name} does not accept freeform input")

"""Provider-neutral request and response types: the one `complete(request) -> response` seam.

Every transport (scripted, OpenAI Responses, Anthropic Messages, Codex
streaming, chat completions) lowers a ProviderRequest to its wire format and
lifts the answer into a ProviderResponse, or raises ProviderFailure with a
stable `kind` that the retry policy classifies.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field


class TokenUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            **{k: getattr(self, k) + getattr(other, k) for k in TokenUsage.model_fields}
        )

    @classmethod
    def of(cls, input_tokens: int = 0, output_tokens: int = 0, **cache: int) -> TokenUsage:
        return cls(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            **cache,
        )


class PromptBlock(BaseModel):
    text: str
    cache_breakpoint: bool = False
    name: str = ""  # what the block is (policy, agent_instructions, episodes, ...): for manifests


class PromptCache(BaseModel):
    agent_id: str
    prompt_cache_key: str
    context_fingerprint: str
    working_memory_revision: int = 0
    compression_epoch: int = 0


class PromptFrame(BaseModel):
    """Provider Prompt Frame: system prompt, system blocks, context blocks, cache identity."""

    system_prompt: str
    system_blocks: list[PromptBlock] = Field(default_factory=list)
    context_blocks: list[PromptBlock] = Field(default_factory=list)
    cache: PromptCache | None = None


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] | None = None
    # the raw argument text as the model sent it (freeform tools, or JSON that failed to parse)
    raw_arguments: str | None = None
    kind: Literal["function", "custom"] = "function"


class UserItem(BaseModel):
    type: Literal["user"] = "user"
    text: str


class AssistantItem(BaseModel):
    type: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolResultItem(BaseModel):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    tool_name: str
    content: str  # the rendered model-visible receipt
    is_error: bool = False
    kind: Literal["function", "custom"] = "function"


ConversationItem = Annotated[UserItem | AssistantItem | ToolResultItem, Field(discriminator="type")]


class ToolDefinition(BaseModel):
    """A tool as offered to a provider. `input_schema` is already emitted (relaxed or strict)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    strict: bool = False
    # freeform (custom grammar) exposure, used for ApplyPatch on Responses transports
    freeform_grammar: str | None = None
    freeform_syntax: Literal["lark", "regex"] = "lark"


class ProviderRequest(BaseModel):
    model_ref: str  # "provider/model"
    frame: PromptFrame
    conversation: list[ConversationItem]
    tools: list[ToolDefinition] = Field(default_factory=list)
    max_output_tokens: int = 8192
    timeout_s: float = 120.0

    @property
    def provider(self) -> str:
        return self.model_ref.split("/", 1)[0]

    @property
    def model(self) -> str:
        return self.model_ref.split("/", 1)[1] if "/" in self.model_ref else self.model_ref


StopReason = Literal["end_turn", "tool_use", "max_output_tokens", "other"]


class ProviderResponse(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    stop_reason: StopReason = "end_turn"
    response_id: str | None = None


class ProviderFailure(Exception):
    """A failed provider request. `kind` drives retry classification:

    retryable: timeout, connection, rate_limited (429), server_error (5xx)
    fail fast: auth (401/403), client_error (other 4xx), invalid_response,
               unsupported_transport, missing_credentials, script_exhausted
    terminal:  context_length_exceeded (never retried, never falls back)
    """

    RETRYABLE = frozenset({"timeout", "connection", "rate_limited", "server_error"})

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        diagnostics: dict[str, Any] | None = None,
        category: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s
        self.diagnostics = diagnostics or {}
        self.category = category or (
            "protocol" if kind in {"invalid_response", "unsupported_transport"} else "transport"
        )

    @property
    def retryable(self) -> bool:
        return self.kind in self.RETRYABLE


class Provider(Protocol):
    """A transport: one request in, one response out, or ProviderFailure."""

    name: str

    def complete(self, request: ProviderRequest) -> ProviderResponse: ...

"""holon.model.conversation: token usage, requests, ProviderFailure classification."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from holon.model.conversation import (
    AssistantItem,
    PromptFrame,
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolResultItem,
    UserItem,
)


def test_token_usage_of_and_addition():
    one = TokenUsage.of(10, 5, cache_read_input_tokens=2)
    assert (one.input_tokens, one.output_tokens, one.total_tokens) == (10, 5, 15)
    assert one.cache_read_input_tokens == 2 and one.cache_creation_input_tokens == 0
    two = TokenUsage.of(1, 1, cache_creation_input_tokens=4)
    total = one + two
    assert total == TokenUsage(
        input_tokens=11,
        output_tokens=6,
        total_tokens=17,
        cache_read_input_tokens=2,
        cache_creation_input_tokens=4,
    )
    assert (one.total_tokens, two.total_tokens) == (15, 2)  # operands unchanged
    assert TokenUsage() + TokenUsage() == TokenUsage()
    assert sum([one, two], TokenUsage()) == total


def test_token_usage_of_rejects_unknown_cache_field():
    with pytest.raises(TypeError):
        TokenUsage.of(1, 2, total_tokens=3)  # total is computed, never passed


def _request(model_ref: str, **kw) -> ProviderRequest:
    return ProviderRequest(
        model_ref=model_ref, frame=PromptFrame(system_prompt="sys"), conversation=[], **kw
    )


@pytest.mark.parametrize(
    "ref, provider, model",
    [
        ("openai/gpt-5", "openai", "gpt-5"),
        ("scripted//tmp/x/script.jsonl", "scripted", "/tmp/x/script.jsonl"),
        ("anthropic/claude/variant", "anthropic", "claude/variant"),
        ("bare", "bare", "bare"),
    ],
)
def test_provider_request_splits_model_ref(ref, provider, model):
    req = _request(ref)
    assert (req.provider, req.model) == (provider, model)
    assert req.max_output_tokens == 8192 and req.tools == []


def test_conversation_items_are_discriminated():
    req = ProviderRequest.model_validate(
        {
            "model_ref": "p/m",
            "frame": {"system_prompt": "s"},
            "conversation": [
                {"type": "user", "text": "hi"},
                {"type": "assistant", "tool_calls": [{"id": "c1", "name": "Exec"}]},
                {"type": "tool_result", "call_id": "c1", "tool_name": "Exec", "content": "ok"},
            ],
        }
    )
    assert [type(i) for i in req.conversation] == [UserItem, AssistantItem, ToolResultItem]
    assert req.conversation[1].tool_calls[0].kind == "function"
    with pytest.raises(ValidationError):
        ProviderRequest.model_validate(
            {
                "model_ref": "p/m",
                "frame": {"system_prompt": "s"},
                "conversation": [{"type": "system", "text": "x"}],
            }
        )


def test_provider_response_defaults():
    resp = ProviderResponse()
    assert resp.text == "" and resp.tool_calls == [] and resp.stop_reason == "end_turn"
    assert resp.usage == TokenUsage()


@pytest.mark.parametrize("kind", ["timeout", "connection", "rate_limited", "server_error"])
def test_retryable_failures(kind):
    failure = ProviderFailure(kind, "transient", status=503, retry_after_s=2.0)
    assert failure.retryable
    assert failure.category == "transport"
    assert (failure.status, failure.retry_after_s, str(failure)) == (503, 2.0, "transient")


@pytest.mark.parametrize(
    "kind",
    [
        "auth",
        "client_error",
        "invalid_response",
        "unsupported_transport",
        "missing_credentials",
        "script_exhausted",
        "context_length_exceeded",
        "budget_exhausted",
    ],
)
def test_fail_fast_failures(kind):
    assert not ProviderFailure(kind, "no").retryable


def test_default_category():
    assert ProviderFailure("invalid_response", "x").category == "protocol"
    assert ProviderFailure("unsupported_transport", "x").category == "protocol"
    assert ProviderFailure("auth", "x").category == "transport"
    assert ProviderFailure("invalid_response", "x", category="runtime").category == "runtime"


def test_diagnostics_default_is_fresh():
    one, two = ProviderFailure("auth", "x"), ProviderFailure("auth", "y")
    one.diagnostics["k"] = "v"
    assert two.diagnostics == {}
    assert ProviderFailure("auth", "x", diagnostics={"a": 1}).diagnostics == {"a": 1}

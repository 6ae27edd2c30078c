"""holon.providers.codex_stream without the network: the streaming request body, folding an SSE
event feed into one response (or its failure), credentials and endpoint selection."""

from __future__ import annotations

import json

import pytest
from provider_kits import FRAME, PATCH_TEXT, TOOLS

from holon.model.conversation import ProviderFailure, ProviderRequest, UserItem
from holon.providers import codex_stream as codex
from holon.providers.resolve import settings

REQUEST = ProviderRequest(
    model_ref="openai-codex/gpt-x",
    frame=FRAME,
    conversation=[UserItem(text="hi")],
    tools=TOOLS,
    max_output_tokens=99,
)

MESSAGE = {
    "type": "message",
    "id": "m1",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Patching."}],
}
PATCH_CALL = {
    "type": "custom_tool_call",
    "id": "ctc",
    "call_id": "c1",
    "name": "ApplyPatch",
    "input": PATCH_TEXT,
}


def completed(output=(), **extra):
    return {
        "type": "response.completed",
        "response": {
            "id": "resp_1",
            "status": "completed",
            "output": list(output),
            "usage": {"input_tokens": 10, "output_tokens": 2},
            **extra,
        },
    }


def test_codex_params():
    params = codex.codex_params(REQUEST)
    assert params["stream"] is True and params["store"] is False
    assert params["include"] == [] and params["reasoning"] is None
    assert "max_output_tokens" not in params and "previous_response_id" not in params
    assert params["model"] == "gpt-x" and params["prompt_cache_key"] == "pck-agent-1-v1"


def test_output_is_rebuilt_from_done_items_when_completed_is_empty():
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "output": []}},
        {"type": "response.output_item.added", "item": {**MESSAGE, "content": []}},
        {"type": "response.output_item.done", "item": MESSAGE},
        {"type": "response.output_text.delta", "delta": "ignored"},
        {"type": "response.output_item.done", "item": PATCH_CALL},
        {"type": "response.output_item.done", "item": "not an object"},
        completed(),
    ]
    response = codex.consume(iter(events))
    assert response.text == "Patching." and response.stop_reason == "tool_use"
    (call,) = response.tool_calls
    assert (call.id, call.kind, call.raw_arguments) == ("c1", "custom", PATCH_TEXT)
    assert response.usage.total_tokens == 12 and response.response_id == "resp_1"


def test_a_full_completed_output_wins_over_done_items():
    other = {**MESSAGE, "content": [{"type": "output_text", "text": "final"}]}
    events = [{"type": "response.output_item.done", "item": MESSAGE}, completed([other])]
    assert codex.consume(events).text == "final"


def test_incomplete_is_a_response_with_its_stop_reason():
    event = {
        "type": "response.incomplete",
        "response": {
            "id": "r",
            "status": "incomplete",
            "output": [MESSAGE],
            "incomplete_details": {"reason": "max_output_tokens"},
        },
    }
    response = codex.consume([event])
    assert response.stop_reason == "max_output_tokens" and response.text == "Patching."


@pytest.mark.parametrize(
    "event, kind",
    [
        (
            {
                "type": "response.failed",
                "response": {"error": {"code": "context_length_exceeded", "message": "too long"}},
            },
            "context_length_exceeded",
        ),
        (
            {"type": "response.failed", "response": {"error": {"code": "rate_limit_exceeded"}}},
            "rate_limited",
        ),
        ({"type": "response.failed"}, "server_error"),
        ({"type": "error", "code": "invalid_prompt", "message": "no"}, "client_error"),
        ({"type": "error", "code": "server_is_overloaded", "message": "later"}, "server_error"),
    ],
)
def test_failures_reported_in_the_feed(event, kind):
    with pytest.raises(ProviderFailure) as info:
        codex.consume([{"type": "response.created", "response": {}}, event, completed()])
    assert info.value.kind == kind
    assert info.value.message.startswith("openai-codex: response failed")
    assert info.value.diagnostics["stage"] == "response"


def test_a_feed_without_a_terminal_event_is_a_connection_failure():
    with pytest.raises(ProviderFailure) as info:
        codex.consume([{"type": "response.output_item.done", "item": MESSAGE}], provider="cx")
    failure = info.value
    assert failure.kind == "connection" and failure.retryable
    assert failure.message == "cx: event stream ended before a terminal response event"
    assert failure.diagnostics["stage"] == "body" and failure.diagnostics["reqwest"]["is_body"]


def test_a_terminal_event_without_a_response_is_invalid():
    with pytest.raises(ProviderFailure) as info:
        codex.consume([{"type": "response.completed", "response": None}])
    assert info.value.kind == "invalid_response" and not info.value.retryable


@pytest.fixture
def codex_home(tmp_path, monkeypatch):
    home = tmp_path / "codex"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_credentials_from_the_environment_first(codex_home, monkeypatch):
    (codex_home / "auth.json").write_text(json.dumps({"tokens": {"access_token": "file"}}))
    monkeypatch.setenv(codex.TOKEN_ENV, "from-env")
    assert codex.credentials() == ("from-env", None, "environment")


def test_credentials_from_the_codex_auth_file(codex_home):
    path = codex_home / "auth.json"
    assert codex.auth_file() == path
    assert codex.credentials() == (None, None, str(path))  # no file
    path.write_text(json.dumps({"tokens": {"access_token": "tok", "account_id": "acct"}}))
    assert codex.credentials() == ("tok", "acct", str(path))
    path.write_text(json.dumps({"tokens": {"access_token": "tok", "account_id": 7}}))
    assert codex.credentials() == ("tok", None, str(path))
    for bad in ("{not json", "[]", json.dumps({"tokens": {"access_token": 5}})):
        path.write_text(bad)
        assert codex.credentials() == (None, None, str(path))


def test_auth_file_defaults_to_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert codex.auth_file() == tmp_path / ".codex" / "auth.json"


def test_base_url_precedence(monkeypatch):
    import os

    from holon import config

    assert settings("openai-codex")["base_url"] == codex.DEFAULT_BASE_URL
    with open(os.path.join(os.environ["HOLON_HOME"], "config.toml"), "w", encoding="utf-8") as f:
        f.write('[providers.openai-codex]\nbase_url = "http://cfg"\n')
    config.reset()
    assert settings("openai-codex")["base_url"] == "http://cfg"
    monkeypatch.setenv("OPENAI_CODEX_BASE_URL", "http://env")
    assert settings("openai-codex")["base_url"] == "http://env"
    assert codex.factory("openai-codex/m", settings("openai-codex")).base_url == "http://env"


def test_missing_token_fails_before_any_request(codex_home):
    with pytest.raises(ProviderFailure) as info:
        codex.factory("openai-codex/gpt-x", settings("openai-codex")).complete(REQUEST)
    assert info.value.kind == "missing_credentials"
    assert codex.TOKEN_ENV in info.value.message and str(codex_home) in info.value.message

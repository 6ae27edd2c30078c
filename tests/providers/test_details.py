"""Transport details: retry-after parsing, fail-closed selection, doctor, Codex auth file,
stop reasons."""

from __future__ import annotations

import json
from email.utils import formatdate

import pytest
from provider_kits import FRAME, SECRET, TOOLS, AnthropicKit, CodexKit, ResponsesKit

from holon.model.conversation import (
    AssistantItem,
    ProviderFailure,
    ProviderRequest,
    ToolCall,
    ToolResultItem,
    UserItem,
)
from holon.providers import errors
from holon.providers.doctor import provider_doctor
from holon.providers.resolve import make_provider
from holon.providers.runner import RoundFailed, run_round


def req(ref, conversation=None, tools=TOOLS):
    return ProviderRequest(
        model_ref=ref,
        frame=FRAME,
        conversation=conversation or [UserItem(text="hi")],
        tools=tools,
        timeout_s=2.0,
    )


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        ({"retry-after-ms": "100", "retry-after": "9"}, 0.1),
    ],
)
def test_retry_after_headers(headers, expected):
    assert errors.retry_after_seconds(headers) == expected


def test_retry_after_http_date():
    value = errors.retry_after_seconds(
        {"retry-after": formatdate(timeval=__import__("time").time() + 20, usegmt=True)}
    )
    assert value is not None and 15 < value <= 20


def test_unknown_provider_fails_closed_and_falls_back_to_configured_chat(server, monkeypatch):
    import os

    with open(os.path.join(os.environ["HOLON_HOME"], "config.toml"), "w", encoding="utf-8") as f:
        f.write(
            f'[providers.ollama]\nbase_url = "{server.url}/v1"\n'
            '[providers.weird]\ntransport = "grpc"\n'
        )
    server.json(
        {
            "id": "c",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
        }
    )
    response, timeline = run_round(
        req("nope/m"),
        ["nope/m", "weird/m", "ollama/llama3"],
        make=make_provider,
        sleep=lambda s: None,
    )
    assert response.text == "ok" and timeline["winning_model_ref"] == "ollama/llama3"
    first, second = timeline["attempts"][:2]
    assert first["failure_kind"] == second["failure_kind"] == "unsupported_transport"
    assert (
        first["transport_diagnostics"]["stage"] == "candidate_selection"
        and first["advanced_to_fallback"]
    )
    assert "authorization" not in server.requests[0].headers  # local ollama: no key, no header
    assert server.requests[0].json["model"] == "llama3"


def test_chat_table_without_base_url_is_unsupported(monkeypatch):
    import os

    with open(os.path.join(os.environ["HOLON_HOME"], "config.toml"), "w", encoding="utf-8") as f:
        f.write(
            '[providers.mystery]\ntransport = "openai_chat_completions"\n'
            'api_key_env = "MYSTERY_KEY"\n'
        )
    with pytest.raises(ProviderFailure) as info:
        make_provider("mystery/m")
    assert (
        info.value.kind == "unsupported_transport"
        and info.value.diagnostics["missing"] == "base_url"
    )


def test_missing_credentials_fail_fast(server):
    with pytest.raises(RoundFailed) as info:
        run_round(
            req("openai/m"), ["openai/m", "anthropic/m"], make=make_provider, sleep=lambda s: None
        )
    assert [a["failure_kind"] for a in info.value.timeline["attempts"]] == [
        "missing_credentials"
    ] * 2
    assert server.requests == []


def test_doctor_reports_presence_never_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    report = provider_doctor()
    assert SECRET not in json.dumps(report)
    by_id = {p["id"]: p for p in report["providers"]}
    assert (
        by_id["openai"]["credentials_present"] is True
        and by_id["anthropic"]["credentials_present"] is False
    )
    assert by_id["ollama"]["credentials_required"] is False
    assert by_id["openai-codex"]["transport"] == "openai_codex_stream"
    policy = report["retry_policy"]
    assert (
        policy["max_retries"] == 2
        and policy["backoff_base_ms"] == 1
        and policy["retry_after_cap_s"] == 30.0
    )
    assert set(policy["retryable"]) == {"timeout", "connection", "rate_limited", "server_error"}


def test_codex_reads_cli_auth_file_and_sends_account(server, monkeypatch, tmp_path):
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "auth.json").write_text(
        json.dumps({"tokens": {"access_token": "tok-file", "account_id": "acct-9"}})
    )
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("OPENAI_CODEX_BASE_URL", server.url)
    CodexKit().push_ok(server, ResponsesKit().text_round())
    make_provider("openai-codex/gpt-5-codex").complete(req("openai-codex/gpt-5-codex"))
    headers = server.requests[0].headers
    assert server.requests[0].path == "/responses"
    assert (
        headers["authorization"] == "Bearer tok-file" and headers["chatgpt-account-id"] == "acct-9"
    )
    assert provider_doctor()["providers"][2]["credentials_present"] is True


def test_codex_incomplete_is_a_truncated_response(server, monkeypatch):
    CodexKit().setup(server, monkeypatch)
    body = {
        **ResponsesKit().text_round(),
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    server.sse(
        [
            {"type": "response.output_item.done", "output_index": 0, "item": body["output"][0]},
            {"type": "response.incomplete", "response": {**body, "output": []}},
        ]
    )
    response = make_provider("openai-codex/m").complete(req("openai-codex/m"))
    assert response.stop_reason == "max_output_tokens" and response.text == "Done."


def test_openai_incomplete_and_unparseable_arguments(server, monkeypatch):
    ResponsesKit().setup(server, monkeypatch)
    body = ResponsesKit().tool_round()
    body["status"], body["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
    body["output"][2]["arguments"] = '{"cmd": "l'
    server.json(body)
    response = make_provider("openai/m").complete(req("openai/m"))
    assert response.stop_reason == "max_output_tokens"
    broken = response.tool_calls[0]
    assert broken.arguments is None and broken.raw_arguments == '{"cmd": "l'
    assert response.tool_calls[1].kind == "custom"


def test_anthropic_tool_result_leads_and_max_tokens(server, monkeypatch):
    AnthropicKit().setup(server, monkeypatch)
    server.json({**AnthropicKit().text_round(), "stop_reason": "max_tokens"})
    conversation = [
        UserItem(text="go"),
        AssistantItem(tool_calls=[ToolCall(id="t1", name="ExecCommand", arguments={"cmd": "ls"})]),
        UserItem(text="(operator) also check b"),
        ToolResultItem(call_id="t1", tool_name="ExecCommand", content="a"),
    ]
    response = make_provider("anthropic/m").complete(req("anthropic/m", conversation))
    assert response.stop_reason == "max_output_tokens"
    last = server.requests[0].json["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]


def test_anthropic_at_most_four_cache_breakpoints(server, monkeypatch):
    from holon.model.conversation import PromptBlock
    from holon.providers.anthropic_messages import request_params

    frame = FRAME.model_copy(
        update={
            "system_blocks": [PromptBlock(text=f"b{i}", cache_breakpoint=True) for i in range(6)]
        }
    )
    params = request_params(
        ProviderRequest(model_ref="anthropic/m", frame=frame, conversation=[UserItem(text="hi")])
    )
    marked = [b["text"] for b in params["system"] if "cache_control" in b]
    rolling = [b["text"] for m in params["messages"] for b in m["content"] if "cache_control" in b]
    assert marked == ["b3", "b4", "b5"] and rolling == ["hi"]  # the newest block rolls; 4 in all

"""Every transport, through `run_round`, against the loopback server:
exchanges, retries, fallback, failures."""

from __future__ import annotations

import json

import pytest
from provider_kits import FRAME, KITS, PATCH_TEXT, SECRET, TOOLS

from holon.model.conversation import AssistantItem, ProviderRequest, ToolResultItem, UserItem
from holon.providers.resolve import make_provider
from holon.providers.runner import RoundFailed, run_round

kits = pytest.mark.parametrize("kit", KITS, ids=[k.transport for k in KITS])


def request(kit, conversation, timeout_s=0.5):
    return ProviderRequest(
        model_ref=kit.ref("model-a"),
        frame=FRAME,
        conversation=conversation,
        tools=TOOLS,
        max_output_tokens=2048,
        timeout_s=timeout_s,
    )


def run(kit, conversation, chain=("model-a",), timeout_s=0.5):
    sleeps: list[float] = []
    response, timeline = run_round(
        request(kit, list(conversation), timeout_s),
        [kit.ref(m) for m in chain],
        make=make_provider,
        sleep=sleeps.append,
    )
    return response, timeline, sleeps


def fail(kit, conversation=None, chain=("model-a",)):
    with pytest.raises(RoundFailed) as info:
        run(kit, conversation or [UserItem(text="hi")], chain)
    return info.value


@kits
def test_multi_round_exchange_with_tool_calls_and_results(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    kit.push_ok(server, kit.tool_round())
    kit.push_ok(server, kit.text_round())
    conversation = [UserItem(text="List the files, then add hello.")]
    first, timeline, _ = run(kit, conversation)
    assert timeline["winning_model_ref"] == kit.ref("model-a")
    assert [(a["provider"], a["attempt"], a["outcome"]) for a in timeline["attempts"]] == [
        (kit.provider, 1, "succeeded")
    ]
    assert [c.name for c in first.tool_calls] == ["ExecCommand", "ApplyPatch"]
    assert first.tool_calls[0].arguments == {"cmd": "ls"}
    assert first.stop_reason == "tool_use" and first.text == "Listing, then patching."
    patch = first.tool_calls[1]
    assert (
        patch.raw_arguments if patch.kind == "custom" else patch.arguments["patch"]
    ) == PATCH_TEXT
    assert first.usage.cache_read_input_tokens == 100 and first.usage.output_tokens == 30
    conversation += [
        AssistantItem(text=first.text, tool_calls=first.tool_calls),
        ToolResultItem(
            call_id=first.tool_calls[0].id, tool_name="ExecCommand", content="a.txt\nb.txt"
        ),
        ToolResultItem(
            call_id=patch.id,
            tool_name="ApplyPatch",
            content="error: hunk did not apply",
            is_error=True,
            kind=patch.kind,
        ),
    ]
    second, timeline, _ = run(kit, conversation)
    assert second.text == "Done." and second.stop_reason == "end_turn" and not second.tool_calls
    assert timeline["aggregated_token_usage"]["output_tokens"] == 30
    bodies = server.bodies()
    assert len(bodies) == 2 and all(b["model"] == "model-a" for b in bodies)
    CHECKS[kit.transport](bodies, first)


def check_responses(bodies, first, *, codex=False):
    for body in bodies:
        assert body["instructions"] == "You are holon test agent.\n\nStable guidance: be brief."
        assert body["prompt_cache_key"] == "pck-agent-1-v1"
        assert body["input"][0] == {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Workspace: /w (clean)"}],
        }
        tools = {t["name"]: t for t in body["tools"]}
        assert (
            tools["ExecCommand"]["type"] == "function" and tools["ExecCommand"]["strict"] is False
        )
        assert tools["ApplyPatch"]["type"] == "custom"
        assert tools["ApplyPatch"]["format"]["type"] == "grammar"
        assert tools["ApplyPatch"]["format"]["syntax"] == "lark"
        assert [t["type"] for t in body["tools"]].count("custom") == 1
        assert "previous_response_id" not in body
        if codex:
            assert body["stream"] is True and body["store"] is False
            assert (
                body["include"] == []
                and body["reasoning"] is None
                and "max_output_tokens" not in body
            )
        else:
            assert "stream" not in body and body["max_output_tokens"] == 2048
    replay = bodies[1]["input"]
    kinds = [i["type"] for i in replay]
    assert kinds == [
        "message",
        "message",
        "message",
        "function_call",
        "custom_tool_call",
        "function_call_output",
        "custom_tool_call_output",
    ]
    assert replay[2] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Listing, then patching."}],
    }
    assert replay[3]["call_id"] == "call_exec_1" and json.loads(replay[3]["arguments"]) == {
        "cmd": "ls"
    }
    assert replay[4] == {
        "type": "custom_tool_call",
        "call_id": "call_patch_1",
        "name": "ApplyPatch",
        "input": PATCH_TEXT,
    }
    assert replay[5] == {
        "type": "function_call_output",
        "call_id": "call_exec_1",
        "output": "a.txt\nb.txt",
    }
    assert replay[6]["call_id"] == "call_patch_1"


def check_anthropic(bodies, first):
    for body in bodies:
        assert body["system"] == [
            {"type": "text", "text": "You are holon test agent."},
            {
                "type": "text",
                "text": "Stable guidance: be brief.",
                "cache_control": {"type": "ephemeral"},
            },
        ]
        assert "stream" not in body and body["max_tokens"] == 2048
        tools = {t["name"]: t for t in body["tools"]}
        assert tools["ApplyPatch"]["input_schema"]["properties"] == {"patch": {"type": "string"}}
        assert all(t["input_schema"]["additionalProperties"] is False for t in body["tools"])
    msgs = bodies[1]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[0]["content"] == [
        {"type": "text", "text": "Workspace: /w (clean)"},
        {"type": "text", "text": "List the files, then add hello."},
    ]
    assert [b["type"] for b in msgs[1]["content"]] == ["text", "tool_use", "tool_use"]
    assert msgs[1]["content"][2]["input"] == {"patch": PATCH_TEXT}
    assert msgs[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_exec_1",
            "content": "a.txt\nb.txt",
            "is_error": False,
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_patch_1",
            "content": "error: hunk did not apply",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},  # the rolling breakpoint: the newest block
        },
    ]


def check_chat(bodies, first):
    for body in bodies:
        assert body["messages"][0] == {
            "role": "system",
            "content": "You are holon test agent.\n\nStable guidance: be brief.",
        }
        assert {t["type"] for t in body["tools"]} == {"function"} and "stream" not in body
        assert body["max_tokens"] == 2048
    msgs = bodies[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "user", "assistant", "tool", "tool"]
    calls = msgs[3]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_exec_1", "call_patch_1"]
    assert json.loads(calls[1]["function"]["arguments"]) == {"patch": PATCH_TEXT}
    assert msgs[4] == {"role": "tool", "tool_call_id": "call_exec_1", "content": "a.txt\nb.txt"}


CHECKS = {
    "openai_responses": check_responses,
    "openai_codex_stream": lambda b, f: check_responses(b, f, codex=True),
    "anthropic_messages": check_anthropic,
    "openai_chat_completions": check_chat,
}


@kits
def test_retryable_failures_take_three_attempts_then_fall_back(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    server.json(
        kit.error_body(429, "Rate limit reached"), 429, {"retry-after-ms": "7", "retry-after": "1"}
    )
    server.json(kit.error_body(500, "The server had an error while processing your request."), 500)
    server.hang(1.5)
    kit.push_ok(server, kit.text_round())
    response, timeline, sleeps = run(kit, [UserItem(text="hi")], chain=("model-a", "model-b"))
    assert response.text == "Done."
    assert [b["model"] for b in server.bodies()] == ["model-a"] * 3 + ["model-b"]
    attempts = timeline["attempts"]
    assert [
        (a["provider"], a["model_ref"], a["attempt"], a["max_attempts"], a["outcome"])
        for a in attempts
    ] == [
        (kit.provider, kit.ref("model-a"), 1, 3, "retrying"),
        (kit.provider, kit.ref("model-a"), 2, 3, "retrying"),
        (kit.provider, kit.ref("model-a"), 3, 3, "retries_exhausted"),
        (kit.provider, kit.ref("model-b"), 1, 3, "succeeded"),
    ]
    assert [a.get("failure_kind") for a in attempts] == [
        "rate_limited",
        "server_error",
        "timeout",
        None,
    ]
    assert [a["advanced_to_fallback"] for a in attempts] == [False, False, True, False]
    assert attempts[0]["backoff_ms"] == 7 and attempts[0]["status"] == 429
    assert attempts[1]["backoff_ms"] == 2 and sleeps == [0.007, 0.002]
    assert attempts[2]["transport_diagnostics"]["reqwest"]["is_timeout"] is True
    assert timeline["winning_model_ref"] == kit.ref("model-b")


@kits
def test_auth_failure_fails_fast_and_falls_back(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    server.json(kit.error_body(401, "Incorrect API key provided."), 401)
    kit.push_ok(server, kit.text_round())
    _, timeline, sleeps = run(kit, [UserItem(text="hi")], chain=("model-a", "model-b"))
    first = timeline["attempts"][0]
    assert (first["failure_kind"], first["outcome"], first["advanced_to_fallback"]) == (
        "auth",
        "fail_fast_aborted",
        True,
    )
    assert len(server.requests) == 2 and sleeps == []


@kits
def test_client_error_is_not_retried(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    server.json(kit.error_body(400, "Invalid value for 'input'.", "invalid_value"), 400)
    failed = fail(kit)
    assert failed.failure.kind == "client_error" and failed.failure.status == 400
    assert (
        len(server.requests) == 1
        and failed.timeline["attempts"][0]["outcome"] == "fail_fast_aborted"
    )


@kits
def test_context_length_is_terminal_one_attempt_no_fallback(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    kit.push_context_overflow(server)
    kit.push_ok(server, kit.text_round())  # must never be requested
    failed = fail(kit, chain=("model-a", "model-b"))
    assert failed.failure.kind == "context_length_exceeded"
    assert len(server.requests) == 1
    assert [(a["attempt"], a["advanced_to_fallback"]) for a in failed.timeline["attempts"]] == [
        (1, False)
    ]
    assert "winning_model_ref" not in failed.timeline


@kits
def test_malformed_json_is_invalid_response(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    kit.push_malformed(server)
    failed = fail(kit)
    assert failed.failure.kind == "invalid_response" and failed.failure.category == "protocol"
    assert len(server.requests) == 1
    assert failed.timeline["attempts"][0]["transport_diagnostics"]["reqwest"]["is_decode"] is True


@kits
def test_connection_reset_mid_body_is_retried_as_connection(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    for _ in range(3):
        server.reset()
    failed = fail(kit)
    assert failed.failure.kind == "connection" and len(server.requests) == 3
    diag = failed.timeline["attempts"][-1]["transport_diagnostics"]
    assert (
        diag["stage"] == "body"
        and diag["reqwest"]["is_body"] is True
        and diag["reqwest"]["is_connect"] is False
    )
    assert "ConnectionResetError" in diag["source_chain"]
    assert failed.timeline["attempts"][-1]["outcome"] == "retries_exhausted"


@kits
def test_hung_server_hits_the_request_timeout(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    for _ in range(3):
        server.hang(1.2)
    failed = fail(kit)
    assert failed.failure.kind == "timeout" and len(server.requests) == 3
    assert all(a["duration_ms"] < 1100 for a in failed.timeline["attempts"])
    assert failed.timeline["attempts"][0]["transport_diagnostics"]["url"].startswith(server.url)


@kits
def test_no_credential_appears_in_failures_or_timeline(kit, server, monkeypatch):
    kit.setup(server, monkeypatch)
    echo = f"Incorrect API key provided: {SECRET}. Authorization: Bearer {SECRET}"
    server.json(kit.error_body(401, echo), 401)
    server.json(kit.error_body(400, echo, "invalid_value"), 400)
    failed = fail(kit, chain=("model-a", "model-b"))
    for text in (
        str(failed),
        failed.failure.message,
        json.dumps(failed.timeline),
        repr(failed.failure.diagnostics),
    ):
        assert SECRET not in text
    assert "[REDACTED]" in failed.failure.message
    assert (
        server.requests[0].headers.get("authorization") == f"Bearer {SECRET}"
    )  # it was really sent

"""holon.providers.openai_responses without the network: tool and input lowering (freeform calls
replayed as custom items), request params, output and usage parsing, failures."""

from __future__ import annotations

import json

import pytest
from provider_kits import EXEC, FRAME, GRAMMAR, PATCH, PATCH_TEXT, TOOLS

from holon.model.conversation import (
    AssistantItem,
    ProviderFailure,
    ProviderRequest,
    ToolCall,
    ToolDefinition,
    ToolResultItem,
    UserItem,
)
from holon.providers import openai_responses as responses


def request(conversation, tools=TOOLS, frame=FRAME) -> ProviderRequest:
    return ProviderRequest(
        model_ref="openai/gpt-x", frame=frame, conversation=conversation, tools=tools
    )


def test_tools_payload():
    strict = ToolDefinition(name="S", description="d", input_schema={"type": "object"}, strict=True)
    exec_tool, patch_tool, strict_tool = responses.tools_payload([EXEC, PATCH, strict])
    assert exec_tool == {
        "type": "function",
        "name": "ExecCommand",
        "description": EXEC.description,
        "parameters": EXEC.input_schema,
        "strict": False,
    }
    assert patch_tool == {
        "type": "custom",
        "name": "ApplyPatch",
        "description": PATCH.description,
        "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
    }
    assert strict_tool["strict"] is True


def test_input_items_replay_calls_by_kind():
    custom = ToolCall(id="call_p", name="ApplyPatch", raw_arguments=PATCH_TEXT, kind="custom")
    as_json = ToolCall(id="call_j", name="ApplyPatch", arguments={"patch": PATCH_TEXT})
    plain = ToolCall(id="call_e", name="ExecCommand", arguments={"cmd": "ls"})
    raw = ToolCall(id="call_r", name="ExecCommand", raw_arguments="{broken")
    items = responses.input_items(
        request(
            [
                UserItem(text="go"),
                AssistantItem(text="Working.", tool_calls=[plain, custom, as_json, raw]),
                ToolResultItem(call_id="call_e", tool_name="ExecCommand", content="a.txt"),
                ToolResultItem(
                    call_id="call_p", tool_name="ApplyPatch", content="ok", kind="custom"
                ),
                ToolResultItem(call_id="call_j", tool_name="ApplyPatch", content="ok too"),
            ]
        )
    )
    assert items[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Workspace: /w (clean)"}],
    }
    assert items[1]["content"] == [{"type": "input_text", "text": "go"}]
    assert items[2] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Working."}],
    }
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_e",
        "name": "ExecCommand",
        "arguments": '{"cmd": "ls"}',
    }
    # ApplyPatch is freeform in this catalog: both calls replay as custom calls with raw input
    assert items[4] == {
        "type": "custom_tool_call",
        "call_id": "call_p",
        "name": "ApplyPatch",
        "input": PATCH_TEXT,
    }
    assert items[5] == {**items[4], "call_id": "call_j"}
    assert items[6]["type"] == "function_call" and items[6]["arguments"] == "{broken"
    assert [i["type"] for i in items[7:]] == [
        "function_call_output",
        "custom_tool_call_output",
        "custom_tool_call_output",
    ]
    assert items[7]["output"] == "a.txt" and items[9]["call_id"] == "call_j"


def test_a_custom_call_stays_custom_when_the_tool_is_json_now():
    custom = ToolCall(id="call_p", name="ApplyPatch", raw_arguments=PATCH_TEXT, kind="custom")
    json_patch = PATCH.model_copy(update={"freeform_grammar": None})
    items = responses.input_items(
        request(
            [
                AssistantItem(tool_calls=[custom]),
                ToolResultItem(
                    call_id="call_p", tool_name="ApplyPatch", content="ok", kind="custom"
                ),
            ],
            tools=[EXEC, json_patch],
        )
    )
    # kind="custom" on the call itself keeps it custom, and its result follows the call
    assert [i["type"] for i in items[1:]] == ["custom_tool_call", "custom_tool_call_output"]


def test_request_params():
    params = responses.request_params(request([UserItem(text="hi")]))
    assert params["model"] == "gpt-x"
    assert params["instructions"] == "You are holon test agent.\n\nStable guidance: be brief."
    assert params["prompt_cache_key"] == "pck-agent-1-v1"
    assert [t["type"] for t in params["tools"]] == ["function", "custom"]
    bare = responses.request_params(
        request([UserItem(text="hi")], tools=[], frame=FRAME.model_copy(update={"cache": None}))
    )
    assert "tools" not in bare and "prompt_cache_key" not in bare
    assert "max_output_tokens" not in params and "stream" not in params


def test_json_arguments():
    assert responses.json_arguments(ToolCall(id="i", name="n", arguments={"é": 1})) == '{"é": 1}'
    assert responses.json_arguments(ToolCall(id="i", name="n", raw_arguments="raw")) == "raw"
    assert responses.json_arguments(ToolCall(id="i", name="n")) == "{}"


def response(output, **extra):
    return {"id": "resp_1", "status": "completed", "output": output, **extra}


def test_parse_response_texts_calls_and_usage():
    data = response(
        [
            {"type": "reasoning", "id": "rs", "summary": []},
            {
                "type": "message",
                "content": [
                    {"type": "output_text", "text": "Hello "},
                    {"type": "refusal", "refusal": "no."},
                    "junk",
                ],
            },
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "ExecCommand",
                "arguments": '{"cmd": "ls"}',
            },
            {"type": "function_call", "id": "fc_2", "name": "ExecCommand", "arguments": "{bad"},
            {
                "type": "function_call",
                "call_id": "c3",
                "name": "ExecCommand",
                "arguments": {"a": 1},
            },
            {
                "type": "custom_tool_call",
                "call_id": "c4",
                "name": "ApplyPatch",
                "input": PATCH_TEXT,
            },
        ],
        usage={
            "input_tokens": 50,
            "output_tokens": 5,
            "input_tokens_details": {"cached_tokens": 40},
        },
    )
    parsed = responses.parse_response(data)
    assert parsed.text == "Hello no." and parsed.stop_reason == "tool_use"
    assert parsed.response_id == "resp_1"
    c1, c2, c3, c4 = parsed.tool_calls
    assert c1.arguments == {"cmd": "ls"}
    assert (c2.id, c2.arguments, c2.raw_arguments) == ("fc_2", None, "{bad")
    assert c3.arguments == {"a": 1}
    assert (c4.kind, c4.raw_arguments, c4.arguments) == ("custom", PATCH_TEXT, None)
    u = parsed.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens, u.cache_read_input_tokens) == (
        50,
        5,
        55,
        40,
    )


@pytest.mark.parametrize(
    "extra, stop",
    [
        ({}, "end_turn"),
        (
            {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
            "max_output_tokens",
        ),
        ({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}, "other"),
        (
            {"status": "completed", "incomplete_details": {"reason": "max_output_tokens"}},
            "end_turn",
        ),
    ],
)
def test_stop_reasons(extra, stop):
    data = response(
        [{"type": "message", "content": [{"type": "output_text", "text": "x"}]}], **extra
    )
    assert responses.parse_response(data).stop_reason == stop


def test_parse_usage_edge_cases():
    assert responses.parse_usage(None).total_tokens == 0
    assert (
        responses.parse_usage(
            {"input_tokens": 3, "output_tokens": 4, "total_tokens": 9}
        ).total_tokens
        == 9
    )


@pytest.mark.parametrize(
    "data, kind, text",
    [
        ({"output": None}, "invalid_response", "no output list"),
        ("nope", "invalid_response", "no output list"),
        (response(["x"]), "invalid_response", "output item is not an object"),
        (
            response([{"type": "function_call", "arguments": "{}"}]),
            "invalid_response",
            "without call_id or name",
        ),
        (
            response(
                [],
                status="failed",
                error={"code": "context_length_exceeded", "message": "too long"},
            ),
            "context_length_exceeded",
            "response failed (context_length_exceeded): too long",
        ),
        (response([], status="failed", error=None), "server_error", "no code"),
    ],
)
def test_failures(data, kind, text):
    with pytest.raises(ProviderFailure) as info:
        responses.parse_response(data, "openai")
    assert info.value.kind == kind and text in info.value.message


def test_failed_response_diagnostics():
    failure = responses.failed_response("p", {"code": "rate_limit_exceeded", "message": "slow"})
    assert failure.kind == "rate_limited" and failure.retryable
    assert failure.diagnostics == {"stage": "response", "error_code": "rate_limit_exceeded"}
    assert json.dumps(failure.diagnostics)  # plain data for the attempt timeline


def test_provider_config_and_missing_key(monkeypatch):
    import os

    from holon import config
    from holon.providers.resolve import settings

    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.example/v1")
    provider = responses.factory("openai/gpt-x", settings("openai"))
    assert provider.base_url == "http://env.example/v1" and provider.key_env == "OPENAI_API_KEY"
    with open(os.path.join(os.environ["HOLON_HOME"], "config.toml"), "w", encoding="utf-8") as f:
        f.write('[providers.openai]\nbase_url = "http://cfg/v1"\napi_key_env = "MY_KEY"\n')
    config.reset()
    provider = responses.factory("openai/gpt-x", settings("openai"))
    assert provider.base_url == "http://cfg/v1" and provider.key_env == "MY_KEY"
    with pytest.raises(ProviderFailure) as info:
        provider.complete(request([UserItem(text="hi")]))
    assert info.value.kind == "missing_credentials" and "MY_KEY" in info.value.message

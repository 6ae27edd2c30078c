"""holon.providers.chat_completions without the network: settings, message lowering, request
params, response parsing, and the failures raised before any request is made."""

from __future__ import annotations

import json

import pytest
from provider_kits import FRAME, PATCH, PATCH_TEXT, TOOLS

from holon.model.conversation import (
    AssistantItem,
    ProviderFailure,
    ProviderRequest,
    ToolCall,
    ToolDefinition,
    ToolResultItem,
    UserItem,
)
from holon.providers import chat_completions as cc
from holon.providers.resolve import settings


def request(conversation, tools=TOOLS) -> ProviderRequest:
    return ProviderRequest(
        model_ref="local/llama3",
        frame=FRAME,
        conversation=conversation,
        tools=tools,
        max_output_tokens=512,
    )


def effective(conf):
    return conf["transport"], conf["base_url"], conf["api_key_env"]


def test_settings_merge_builtin_defaults_and_the_table():
    import os

    from holon import config

    assert effective(settings("ollama")) == (cc.TRANSPORT, "http://127.0.0.1:11434/v1", None)
    with open(os.path.join(os.environ["HOLON_HOME"], "config.toml"), "w", encoding="utf-8") as f:
        f.write(
            '[providers.deepseek]\nbase_url = "http://proxy/v1"\n'
            '[providers.mine]\ntransport = "openai_chat_completions"\nbase_url = "u"\n'
        )
    config.reset()
    # a key the table does not set keeps its default
    assert effective(settings("deepseek")) == (cc.TRANSPORT, "http://proxy/v1", "DEEPSEEK_API_KEY")
    assert effective(settings("mine")) == (cc.TRANSPORT, "u", None)


def test_messages_payload_lowers_every_item_kind():
    custom = ToolCall(id="call_p", name="ApplyPatch", raw_arguments=PATCH_TEXT, kind="custom")
    plain = ToolCall(id="call_e", name="ExecCommand", arguments={"cmd": "ls"})
    messages = cc.messages_payload(
        request(
            [
                UserItem(text="go"),
                AssistantItem(text="", tool_calls=[plain, custom]),
                ToolResultItem(call_id="call_e", tool_name="ExecCommand", content="a.txt"),
                ToolResultItem(
                    call_id="call_p", tool_name="ApplyPatch", content="ok", kind="custom"
                ),
                AssistantItem(text="Done."),
            ]
        )
    )
    assert messages[0] == {
        "role": "system",
        "content": "You are holon test agent.\n\nStable guidance: be brief.",
    }
    assert messages[1] == {"role": "user", "content": "Workspace: /w (clean)"}
    assert messages[2] == {"role": "user", "content": "go"}
    assistant = messages[3]
    assert assistant["role"] == "assistant" and assistant["content"] is None
    calls = assistant["tool_calls"]
    assert [c["id"] for c in calls] == ["call_e", "call_p"]
    assert all(c["type"] == "function" for c in calls)
    assert json.loads(calls[0]["function"]["arguments"]) == {"cmd": "ls"}
    assert json.loads(calls[1]["function"]["arguments"]) == {"patch": PATCH_TEXT}
    assert messages[4] == {"role": "tool", "tool_call_id": "call_e", "content": "a.txt"}
    assert messages[5] == {"role": "tool", "tool_call_id": "call_p", "content": "ok"}
    assert messages[6] == {"role": "assistant", "content": "Done."}


def test_no_system_message_without_a_system_prompt():
    frame = FRAME.model_copy(
        update={"system_prompt": "", "system_blocks": [], "context_blocks": []}
    )
    req = ProviderRequest(model_ref="x/y", frame=frame, conversation=[UserItem(text="hi")])
    assert cc.messages_payload(req) == [{"role": "user", "content": "hi"}]


def test_request_params_tools_are_functions_and_strict_only_when_asked():
    strict = ToolDefinition(name="S", description="d", input_schema={"type": "object"}, strict=True)
    params = cc.request_params(request([UserItem(text="hi")], tools=[*TOOLS, strict]))
    assert params["model"] == "llama3" and params["max_tokens"] == 512
    tools = {t["function"]["name"]: t for t in params["tools"]}
    assert all(t["type"] == "function" for t in tools.values())
    assert tools["ApplyPatch"]["function"]["parameters"] == PATCH.input_schema
    assert "strict" not in tools["ExecCommand"]["function"]
    assert tools["S"]["function"]["strict"] is True
    assert "tools" not in cc.request_params(request([UserItem(text="hi")], tools=[]))


def completion(message, finish="stop", usage=None, cid="c1"):
    return {
        "id": cid,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        **({"usage": usage} if usage is not None else {}),
    }


@pytest.mark.parametrize(
    "finish, calls, stop",
    [
        ("stop", False, "end_turn"),
        ("tool_calls", True, "tool_use"),
        ("function_call", True, "tool_use"),
        ("length", False, "max_output_tokens"),
        ("content_filter", False, "other"),
        (None, True, "tool_use"),
        (None, False, "end_turn"),
    ],
)
def test_finish_reasons(finish, calls, stop):
    message = {"role": "assistant", "content": "x"}
    if calls:
        message["tool_calls"] = [
            {"id": "t", "type": "function", "function": {"name": "ExecCommand", "arguments": "{}"}}
        ]
    assert cc.parse_response(completion(message, finish), "p").stop_reason == stop


def test_parse_tool_calls_and_usage():
    data = completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "ExecCommand", "arguments": '{"cmd": "ls"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "ExecCommand", "arguments": "{broken"},
                },
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "ExecCommand", "arguments": {"cmd": "pwd"}},
                },
                {
                    "id": "d",
                    "type": "function",
                    "function": {"name": "ExecCommand", "arguments": ""},
                },
            ],
        },
        "tool_calls",
        {"prompt_tokens": 100, "completion_tokens": 7, "prompt_cache_hit_tokens": 64},
    )
    response = cc.parse_response(data, "deepseek")
    assert response.text == "" and response.response_id == "c1"
    a, b, c, d = response.tool_calls
    assert a.arguments == {"cmd": "ls"} and a.raw_arguments is None
    assert b.arguments is None and b.raw_arguments == "{broken"
    assert c.arguments == {"cmd": "pwd"} and d.arguments == {}
    u = response.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens, u.cache_read_input_tokens) == (
        100,
        7,
        107,
        64,
    )


@pytest.mark.parametrize(
    "data, kind, text",
    [
        ({"choices": []}, "invalid_response", "has no choices"),
        ([], "invalid_response", "has no choices"),
        ({"choices": [{"index": 0}]}, "invalid_response", "has no message"),
        (
            completion({"tool_calls": [{"type": "function", "function": {"name": "X"}}]}),
            "invalid_response",
            "without id or function name",
        ),
        (
            {"error": {"message": "slow down", "code": "rate_limit_exceeded"}},
            "rate_limited",
            "slow down",
        ),
        (
            {"error": {"message": "This model's maximum context length is 8192 tokens"}},
            "context_length_exceeded",
            "maximum context length",
        ),
    ],
)
def test_bad_responses(data, kind, text):
    with pytest.raises(ProviderFailure) as info:
        cc.parse_response(data, "local")
    assert info.value.kind == kind and text in info.value.message


def test_failures_before_any_request(monkeypatch):
    with pytest.raises(ProviderFailure) as info:
        cc.factory("mystery/m", {"api_key_env": "K"})
    assert info.value.kind == "unsupported_transport"
    assert info.value.diagnostics["missing"] == "base_url"
    provider = cc.factory("openrouter/some-model", settings("openrouter"))
    assert provider.base_url == "https://openrouter.ai/api/v1"
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(ProviderFailure) as info:
        provider.complete(request([UserItem(text="hi")]))
    assert info.value.kind == "missing_credentials"
    assert info.value.diagnostics == {
        "stage": "credentials",
        "credential_env": "OPENROUTER_API_KEY",
    }

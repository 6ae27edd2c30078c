"""Per-transport kits for the loopback tests: environment, real response and error bodies,
request readers.

Each kit knows how its API answers (success bodies, the API's own error body
shapes) and how to read the tools / tool calls / tool results back out of a
recorded request, so one set of tests drives all four transports.
"""

from __future__ import annotations

import json
from typing import Any

from holon.model.conversation import PromptBlock, PromptCache, PromptFrame, ToolDefinition

SECRET = "sk-canary-SECRET-0123456789abcdef"
GRAMMAR = (
    'start: "*** Begin Patch" NEWLINE LINE* "*** End Patch"\n'
    "LINE: /[^\\n]*\\n/\n%import common.NEWLINE\n"
)

FRAME = PromptFrame(
    system_prompt="You are holon test agent.",
    system_blocks=[PromptBlock(text="Stable guidance: be brief.", cache_breakpoint=True)],
    context_blocks=[PromptBlock(text="Workspace: /w (clean)")],
    cache=PromptCache(
        agent_id="agent-1", prompt_cache_key="pck-agent-1-v1", context_fingerprint="fp-1"
    ),
)

EXEC = ToolDefinition(
    name="ExecCommand",
    description="Run a shell command.",
    input_schema={
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "timeout_s": {"type": "integer"}},
        "required": ["cmd"],
        "additionalProperties": False,
    },
)
PATCH = ToolDefinition(
    name="ApplyPatch",
    description="Apply a unified diff.",
    input_schema={
        "type": "object",
        "properties": {"patch": {"type": "string"}},
        "required": ["patch"],
        "additionalProperties": False,
    },
    freeform_grammar=GRAMMAR,
)
TOOLS = [EXEC, PATCH]
PATCH_TEXT = "*** Begin Patch\n+hello\n*** End Patch"


class Kit:
    transport: str
    provider: str

    def ref(self, model: str) -> str:
        return f"{self.provider}/{model}"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        raise NotImplementedError

    def push_ok(self, server: Any, body: dict[str, Any]) -> None:
        server.json(body)

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        etype = {401: "invalid_request_error", 429: "requests", 500: "server_error"}.get(
            status, "invalid_request_error"
        )
        return {"error": {"message": message, "type": etype, "param": None, "code": code}}

    def push_context_overflow(self, server: Any) -> None:
        server.json(
            self.error_body(
                400,
                "Your input exceeds the context window of this model. Please adjust your "
                "input and try again.",
                "context_length_exceeded",
            ),
            400,
        )

    def push_malformed(self, server: Any) -> None:
        server.malformed()


class ResponsesKit(Kit):
    transport, provider = "openai_responses", "openai"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")

    def tool_round(self) -> dict[str, Any]:
        return _response(
            "resp_1",
            [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {
                            "type": "output_text",
                            "text": "Listing, then patching.",
                            "annotations": [],
                        }
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_exec_1",
                    "name": "ExecCommand",
                    "arguments": '{"cmd": "ls"}',
                    "status": "completed",
                },
                {
                    "type": "custom_tool_call",
                    "id": "ctc_1",
                    "call_id": "call_patch_1",
                    "name": "ApplyPatch",
                    "input": PATCH_TEXT,
                    "status": "completed",
                },
            ],
        )

    def text_round(self) -> dict[str, Any]:
        return _response(
            "resp_2",
            [
                {
                    "type": "message",
                    "id": "msg_2",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
                }
            ],
        )

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["parameters"] for t in body["tools"] if t["type"] == "function"]


class CodexKit(ResponsesKit):
    transport, provider = "openai_codex_stream", "openai-codex"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("OPENAI_CODEX_ACCESS_TOKEN", SECRET)
        monkeypatch.setenv("OPENAI_CODEX_BASE_URL", server.url + "/backend-api/codex")

    def push_ok(self, server: Any, body: dict[str, Any]) -> None:
        """Stream it as the Codex backend does: items in output_item.done,
        then a completed with output: []."""
        events: list[dict[str, Any]] = [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**body, "status": "in_progress", "output": [], "usage": None},
            }
        ]
        for i, item in enumerate(body["output"]):
            events.append(
                {
                    "type": "response.output_item.added",
                    "sequence_number": len(events),
                    "output_index": i,
                    "item": {**item, "status": "in_progress"},
                }
            )
            events.append(
                {
                    "type": "response.output_item.done",
                    "sequence_number": len(events),
                    "output_index": i,
                    "item": item,
                }
            )
        events.append(
            {
                "type": "response.completed",
                "sequence_number": len(events),
                "response": {**body, "output": []},
            }
        )
        server.sse(events)

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        if status == 429:
            return {
                "error": {
                    "type": "usage_limit_reached",
                    "message": message,
                    "plan_type": "plus",
                    "resets_in_seconds": 60,
                }
            }
        return {"detail": message} if code is None else super().error_body(status, message, code)

    def push_context_overflow(self, server: Any) -> None:
        server.sse(
            [
                {
                    "type": "response.created",
                    "sequence_number": 0,
                    "response": {"id": "resp_x", "status": "in_progress", "output": []},
                },
                {
                    "type": "response.failed",
                    "sequence_number": 1,
                    "response": {
                        "id": "resp_x",
                        "status": "failed",
                        "output": [],
                        "error": {
                            "code": "context_length_exceeded",
                            "message": "Your input exceeds the context window of this model.",
                        },
                    },
                },
            ]
        )

    def push_malformed(self, server: Any) -> None:
        server.sse_raw(
            b'event: response.created\ndata: {"type": "response.created", "response": {\n\n'
        )


class AnthropicKit(Kit):
    transport, provider = "anthropic_messages", "anthropic"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)

    def tool_round(self) -> dict[str, Any]:
        return _message(
            "msg_1",
            [
                {"type": "text", "text": "Listing, then patching."},
                {
                    "type": "tool_use",
                    "id": "toolu_exec_1",
                    "name": "ExecCommand",
                    "input": {"cmd": "ls"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_patch_1",
                    "name": "ApplyPatch",
                    "input": {"patch": PATCH_TEXT},
                },
            ],
            "tool_use",
        )

    def text_round(self) -> dict[str, Any]:
        return _message("msg_2", [{"type": "text", "text": "Done."}], "end_turn")

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        etype = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            500: "api_error",
            529: "overloaded_error",
        }[status]
        return {
            "type": "error",
            "error": {"type": etype, "message": message},
            "request_id": "req_011CTest",
        }

    def push_context_overflow(self, server: Any) -> None:
        server.json(self.error_body(400, "prompt is too long: 208310 tokens > 200000 maximum"), 400)

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["input_schema"] for t in body["tools"]]


class ChatKit(Kit):
    transport, provider = "openai_chat_completions", "localchat"

    def setup(self, server: Any, monkeypatch: Any) -> None:
        import os

        home = os.environ["HOLON_HOME"]
        with open(f"{home}/config.toml", "w", encoding="utf-8") as f:
            f.write(
                f'[providers.localchat]\ntransport = "openai_chat_completions"\n'
                f'base_url = "{server.url}/v1"\napi_key_env = "LOCALCHAT_API_KEY"\n'
            )
        monkeypatch.setenv("LOCALCHAT_API_KEY", SECRET)
        from holon import config

        config.reset()

    def tool_round(self) -> dict[str, Any]:
        return _completion(
            "chatcmpl-1",
            {
                "role": "assistant",
                "content": "Listing, then patching.",
                "tool_calls": [
                    {
                        "id": "call_exec_1",
                        "type": "function",
                        "function": {"name": "ExecCommand", "arguments": '{"cmd": "ls"}'},
                    },
                    {
                        "id": "call_patch_1",
                        "type": "function",
                        "function": {
                            "name": "ApplyPatch",
                            "arguments": json.dumps({"patch": PATCH_TEXT}),
                        },
                    },
                ],
            },
            "tool_calls",
        )

    def text_round(self) -> dict[str, Any]:
        return _completion("chatcmpl-2", {"role": "assistant", "content": "Done."}, "stop")

    def push_context_overflow(self, server: Any) -> None:
        server.json(
            self.error_body(
                400,
                "This model's maximum context length is 65536 tokens. However, you requested "
                "70123 tokens (62123 in the messages, 8000 in the completion).",
                "invalid_request_error",
            ),
            400,
        )

    def tools_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return body["tools"]

    def schemas_sent(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t["function"]["parameters"] for t in body["tools"]]


KITS = [ResponsesKit(), CodexKit(), AnthropicKit(), ChatKit()]


def _response(rid: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "m",
        "output": output,
        "usage": {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 100},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 150,
        },
    }


def _message(mid: str, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 20,
            "output_tokens": 30,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
        },
    }


def _completion(cid: str, message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    }

"""`anthropic/*`: the Anthropic Messages API, non-streaming, through the official `anthropic` SDK.

Lowering: `system` is a list of text blocks (system prompt, then system
blocks) with `cache_control: {"type": "ephemeral"}` on blocks marked
`cache_breakpoint`; context blocks (the episode block) lead the first user
message, with their own mark; one rolling mark sits on the newest block of
the last message (at most the last 4 marks are kept, the API's limit).
Assistant rounds carry `tool_use` blocks; tool results become `tool_result`
blocks (`tool_use_id`, `is_error`) that lead their user message, consecutive
results sharing one message. Every tool is a JSON tool with `input_schema`,
ApplyPatch included with its `patch` schema (no freeform grammar here); a
freeform call made on another transport is replayed as
`{<its one string field>: <raw text>}`.
"""

from __future__ import annotations

import json
from typing import Any

from holon import keys
from holon.model.conversation import (
    AssistantItem,
    PromptBlock,
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolResultItem,
    UserItem,
)
from holon.providers import endpoints, errors
from holon.providers.lowering import json_input

DEFAULT_BASE_URL = endpoints.ANTHROPIC_BASE_URL
MAX_BREAKPOINTS = 4
_STOP = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_output_tokens",
}


def tools_payload(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        entry: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
        if tool.strict:
            entry["strict"] = True
        out.append(entry)
    return out


def _text_blocks(blocks: list[PromptBlock]) -> list[dict[str, Any]]:
    return [
        {
            "type": "text",
            "text": b.text,
            **({"cache_control": {"type": "ephemeral"}} if b.cache_breakpoint else {}),
        }
        for b in blocks
        if b.text
    ]


def _limit_breakpoints(blocks: list[dict[str, Any]]) -> None:
    marked = [b for b in blocks if "cache_control" in b]
    for block in marked[:-MAX_BREAKPOINTS]:
        del block["cache_control"]


def system_blocks(request: ProviderRequest) -> list[dict[str, Any]]:
    frame = request.frame
    return _text_blocks([PromptBlock(text=frame.system_prompt), *frame.system_blocks])


def _add_user(messages: list[dict[str, Any]], block: dict[str, Any]) -> None:
    if not messages or messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": [block]})
        return
    content = messages[-1]["content"]
    if block["type"] == "tool_result":  # tool results lead their user message
        lead = next((i for i, b in enumerate(content) if b["type"] != "tool_result"), len(content))
        content.insert(lead, block)
    else:
        content.append(block)


def messages_payload(request: ProviderRequest) -> list[dict[str, Any]]:
    tools = {t.name: t for t in request.tools}
    messages: list[dict[str, Any]] = []
    for block in _text_blocks(request.frame.context_blocks):
        _add_user(messages, block)
    for item in request.conversation:
        if isinstance(item, UserItem):
            _add_user(messages, {"type": "text", "text": item.text})
        elif isinstance(item, ToolResultItem):
            _add_user(
                messages,
                {
                    "type": "tool_result",
                    "tool_use_id": item.call_id,
                    "content": item.content,
                    "is_error": item.is_error,
                },
            )
        elif isinstance(item, AssistantItem):
            content: list[dict[str, Any]] = (
                [{"type": "text", "text": item.text}] if item.text else []
            )
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": json_input(c, tools)}
                for c in item.tool_calls
            ]
            if content:
                messages.append({"role": "assistant", "content": content})
    if messages and messages[-1]["content"]:  # the rolling breakpoint: the newest block
        messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return messages


def request_params(request: ProviderRequest) -> dict[str, Any]:
    system = system_blocks(request)
    messages = messages_payload(request)
    _limit_breakpoints(system + [b for m in messages for b in m["content"]])
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "system": system,
        "messages": messages,
    }
    if request.tools:
        params["tools"] = tools_payload(request.tools)
    return params


def _invalid(message: str) -> ProviderFailure:
    return ProviderFailure("invalid_response", message, diagnostics={"stage": "decode"})


def parse_response(data: Any) -> ProviderResponse:
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise _invalid("anthropic: response has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        if not isinstance(block, dict):
            raise _invalid("anthropic: content block is not an object")
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise _invalid("anthropic: tool_use block without id or name")
            args = block.get("input")
            calls.append(
                ToolCall(
                    id=block["id"],
                    name=block["name"],
                    arguments=args if isinstance(args, dict) else None,
                    raw_arguments=None if isinstance(args, dict) else json.dumps(args),
                )
            )
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    inp, out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return ProviderResponse(
        text="".join(texts),
        tool_calls=calls,
        response_id=data.get("id"),
        stop_reason=_STOP.get(str(data.get("stop_reason")), "tool_use" if calls else "other"),
        usage=TokenUsage(
            input_tokens=inp,
            output_tokens=out,
            total_tokens=inp + out,
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        ),
    )


class AnthropicMessagesProvider:
    name = "anthropic"

    def __init__(self, model_ref: str, settings: dict[str, Any]) -> None:
        """`settings`: the provider's effective settings (holon.providers.resolve.settings)."""
        self.model_ref = model_ref
        self.key_env: str | None = settings.get("api_key_env")
        self.base_url = str(settings["base_url"])

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        api_key = keys.lookup(self.key_env) if self.key_env else None
        if self.key_env and not api_key:
            raise errors.missing_key("anthropic", self.key_env, self.model_ref)
        import anthropic

        probe = errors.Probe()
        http = anthropic.DefaultHttpxClient(timeout=request.timeout_s, event_hooks=probe.hooks())
        client = anthropic.Anthropic(
            api_key=api_key or "unused",
            base_url=self.base_url,
            timeout=request.timeout_s,
            max_retries=0,
            http_client=http,
            open_telemetry=False,
        )
        # an endpoint that takes no key gets no key header at all
        omit = {"Authorization": anthropic.Omit(), "X-Api-Key": anthropic.Omit()}
        try:
            raw = client.messages.with_raw_response.create(
                **request_params(request), extra_headers=None if api_key else omit
            )
            data = json.loads(raw.http_response.text)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise errors.from_exception(
                exc,
                provider="anthropic",
                probe=probe,
                url=self.base_url,
                secrets=(api_key,) if api_key else (),
            ) from None
        finally:
            client.close()
        return parse_response(data)


def factory(model_ref: str, settings: dict[str, Any]) -> AnthropicMessagesProvider:
    return AnthropicMessagesProvider(model_ref, settings)

"""OpenAI-compatible Chat Completions (`openai_chat_completions`) for
configured and a few built-in providers.

A `[providers.NAME]` table in `$HOLON_HOME/config.toml` with
`transport = "openai_chat_completions"`, `base_url` and (optionally)
`api_key_env` serves `NAME/model`. Built-in defaults exist only where the
endpoint and a plain bearer key (or no key) fit this contract:

    ollama      http://127.0.0.1:11434/v1       no key (local)
    openrouter  https://openrouter.ai/api/v1    OPENROUTER_API_KEY
    deepseek    https://api.deepseek.com        DEEPSEEK_API_KEY

A config table overrides a default field by field (holon.providers.resolve.settings merges
them; this module only keeps the table of defaults). Anything needing native
auth, custom headers or discovery (Azure, Bedrock, Vertex ...) is not built
in. Every tool, ApplyPatch included, is a `function` tool; calls come back as
`tool_calls` and results go back as `role: "tool"` messages.
"""

from __future__ import annotations

import json
from typing import Any

from holon import keys
from holon.model.conversation import (
    AssistantItem,
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolCall,
    ToolResultItem,
    UserItem,
)
from holon.providers import endpoints, errors
from holon.providers.lowering import json_input

TRANSPORT = endpoints.CHAT_TRANSPORT
BUILTIN = endpoints.CHAT_BUILTIN
_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_output_tokens",
}


def messages_payload(request: ProviderRequest) -> list[dict[str, Any]]:
    frame = request.frame
    system = "\n\n".join(
        p for p in [frame.system_prompt, *(b.text for b in frame.system_blocks)] if p
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    if frame.context_blocks:
        messages.append(
            {"role": "user", "content": "\n\n".join(b.text for b in frame.context_blocks)}
        )
    tools = {t.name: t for t in request.tools}
    for item in request.conversation:
        if isinstance(item, UserItem):
            messages.append({"role": "user", "content": item.text})
        elif isinstance(item, ToolResultItem):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.content})
        elif isinstance(item, AssistantItem):
            msg: dict[str, Any] = {"role": "assistant", "content": item.text or None}
            if item.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": json.dumps(json_input(c, tools), ensure_ascii=False),
                        },
                    }
                    for c in item.tool_calls
                ]
            messages.append(msg)
    return messages


def request_params(request: ProviderRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages_payload(request),
        "max_tokens": request.max_output_tokens,
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    **({"strict": True} if t.strict else {}),
                },
            }
            for t in request.tools
        ]
    return params


def _invalid(message: str) -> ProviderFailure:
    return ProviderFailure("invalid_response", message, diagnostics={"stage": "decode"})


def _call(raw_call: Any) -> ToolCall:
    fn = raw_call.get("function") if isinstance(raw_call, dict) else None
    if (
        not isinstance(fn, dict)
        or not isinstance(fn.get("name"), str)
        or not isinstance(raw_call.get("id"), str)
    ):
        raise _invalid("chat completion tool call without id or function name")
    raw = fn.get("arguments")
    raw = raw if isinstance(raw, str) else json.dumps(raw or {})
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolCall(id=raw_call["id"], name=fn["name"], arguments=parsed)
    return ToolCall(id=raw_call["id"], name=fn["name"], raw_arguments=raw)


def parse_response(data: Any, provider: str) -> ProviderResponse:
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if isinstance(data, dict) and data.get(
            "error"
        ):  # some servers answer 200 with an error body
            code, etype, message = errors.error_fields(data)
            kind = (
                "context_length_exceeded"
                if errors.is_context_overflow(None, data)
                else errors.stream_error_kind(code, etype)
            )
            raise ProviderFailure(
                kind, f"{provider}: {message}"[:600], diagnostics={"stage": "response"}
            )
        raise _invalid(f"{provider}: chat completion has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _invalid(f"{provider}: chat completion choice has no message")
    calls = [_call(c) for c in message.get("tool_calls") or []]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    inp, out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or usage.get(
        "prompt_cache_hit_tokens"
    )
    finish = choices[0].get("finish_reason")
    return ProviderResponse(
        text=str(message.get("content") or ""),
        tool_calls=calls,
        response_id=data.get("id"),
        stop_reason=_FINISH.get(
            str(finish), "tool_use" if calls else "end_turn" if finish is None else "other"
        ),
        usage=TokenUsage(
            input_tokens=inp,
            output_tokens=out,
            total_tokens=int(usage.get("total_tokens") or inp + out),
            cache_read_input_tokens=int(cached or 0),
        ),
    )


class ChatCompletionsProvider:
    def __init__(self, model_ref: str, settings: dict[str, Any]) -> None:
        """`settings`: the provider's effective settings (holon.providers.resolve.settings)."""
        self.name = model_ref.split("/", 1)[0]
        self.model_ref = model_ref
        if not settings.get("base_url"):
            raise ProviderFailure(
                "unsupported_transport",
                f"provider {self.name!r} has no base_url; add base_url to [providers.{self.name}] "
                f"in config.toml",
                category="protocol",
                diagnostics={
                    "stage": "candidate_selection",
                    "transport": TRANSPORT,
                    "missing": "base_url",
                },
            )
        self.base_url = str(settings["base_url"])
        self.key_env: str | None = settings.get("api_key_env") or None

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        api_key = keys.lookup(self.key_env) if self.key_env else None
        if self.key_env and not api_key:
            raise errors.missing_key(self.name, self.key_env, self.model_ref)
        import openai

        probe = errors.Probe()
        http = openai.DefaultHttpxClient(timeout=request.timeout_s, event_hooks=probe.hooks())
        # a keyless endpoint (local ollama) gets no Authorization header at all
        client = openai.OpenAI(
            api_key=api_key or "unused",
            base_url=self.base_url,
            timeout=request.timeout_s,
            max_retries=0,
            http_client=http,
        )
        omit_auth = None if api_key else {"Authorization": openai.Omit()}
        try:
            raw = client.chat.completions.with_raw_response.create(
                **request_params(request), extra_headers=omit_auth
            )
            data = json.loads(raw.http_response.text)
        except (openai.OpenAIError, ValueError) as exc:
            raise errors.from_exception(
                exc,
                provider=self.name,
                probe=probe,
                url=self.base_url,
                secrets=(api_key,) if api_key else (),
            ) from None
        finally:
            client.close()
        return parse_response(data, self.name)


def factory(model_ref: str, settings: dict[str, Any]) -> ChatCompletionsProvider:
    return ChatCompletionsProvider(model_ref, settings)

"""`openai/*`: the OpenAI Responses API, non-streaming, through the official `openai` SDK.

The Responses lowering (tools, instructions, input items) and the output
parser live here and are shared with the Codex streaming transport. The SDK
is imported only inside `sdk_client`, when a request is actually made.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from holon import jsonfile, keys
from holon.model.conversation import (
    AssistantItem,
    PromptFrame,
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
from holon.providers.lowering import freeform_text
from holon.store.atomic import write_json

DEFAULT_BASE_URL = endpoints.OPENAI_BASE_URL


def sdk_client(
    api_key: str | None,
    base_url: str,
    timeout_s: float,
    probe: errors.Probe,
    headers: dict[str, str] | None = None,
) -> Any:
    """An `openai.OpenAI` client with SDK retries off, an explicit timeout and the probe's event
    hooks. Without a key (an endpoint that takes none) pass `no_auth()` as a request's
    extra_headers, so that no Authorization header is sent."""
    import openai

    http = openai.DefaultHttpxClient(timeout=timeout_s, event_hooks=probe.hooks())
    return openai.OpenAI(
        api_key=api_key or "unused",
        base_url=base_url,
        timeout=timeout_s,
        max_retries=0,
        http_client=http,
        default_headers=headers,
    )


def no_auth(api_key: str | None) -> dict[str, Any] | None:
    """A request's extra_headers: none with a key; without one, the Authorization header
    omitted."""
    if api_key:
        return None
    import openai

    return {"Authorization": openai.Omit()}


def sdk_errors() -> tuple[type[BaseException], ...]:
    import openai

    return (openai.OpenAIError, ValueError)


# -- lowering -----------------------------------------------------------------------------------


def tools_payload(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    """Function tools (`strict` always explicit); a freeform-grammar tool becomes a `custom`
    tool."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if tool.freeform_grammar is not None:
            out.append(
                {
                    "type": "custom",
                    "name": tool.name,
                    "description": tool.description,
                    "format": {
                        "type": "grammar",
                        "syntax": tool.freeform_syntax,
                        "definition": tool.freeform_grammar,
                    },
                }
            )
        else:
            out.append(
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                    "strict": bool(tool.strict),
                }
            )
    return out


def instructions(request: ProviderRequest) -> str:
    frame = request.frame
    return "\n\n".join(
        p for p in [frame.system_prompt, *(b.text for b in frame.system_blocks)] if p
    )


def json_arguments(call: ToolCall) -> str:
    if call.arguments is not None:
        return json.dumps(call.arguments, ensure_ascii=False)
    return call.raw_arguments or "{}"


def input_items(request: ProviderRequest) -> list[dict[str, Any]]:
    """Context blocks first, then the conversation; call kinds follow the current tool catalog."""
    freeform = {t.name for t in request.tools if t.freeform_grammar is not None}
    items: list[dict[str, Any]] = []
    if request.frame.context_blocks:
        items.append(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": b.text} for b in request.frame.context_blocks
                ],
            }
        )
    custom_calls: set[str] = set()
    for item in request.conversation:
        if isinstance(item, UserItem):
            items.append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": item.text}],
                }
            )
        elif isinstance(item, AssistantItem):
            if item.text:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": item.text}],
                    }
                )
            for call in item.tool_calls:
                if call.kind == "custom" or call.name in freeform:
                    custom_calls.add(call.id)
                    items.append(
                        {
                            "type": "custom_tool_call",
                            "call_id": call.id,
                            "name": call.name,
                            "input": freeform_text(call),
                        }
                    )
                else:
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": call.id,
                            "name": call.name,
                            "arguments": json_arguments(call),
                        }
                    )
        elif isinstance(item, ToolResultItem):
            custom = item.call_id in custom_calls or (
                item.kind == "custom" and item.tool_name in freeform
            )
            items.append(
                {
                    "type": "custom_tool_call_output" if custom else "function_call_output",
                    "call_id": item.call_id,
                    "output": item.content,
                }
            )
    return items


def request_params(request: ProviderRequest) -> dict[str, Any]:
    """The body shared by both Responses transports (the caller adds its own transport fields)."""
    params: dict[str, Any] = {
        "model": request.model,
        "instructions": instructions(request),
        "input": input_items(request),
    }
    if request.tools:
        params["tools"] = tools_payload(request.tools)
    if request.frame.cache is not None:
        params["prompt_cache_key"] = request.frame.cache.prompt_cache_key
    return params


# -- parsing ------------------------------------------------------------------------------------


def _invalid(message: str) -> ProviderFailure:
    return ProviderFailure(
        "invalid_response",
        message,
        diagnostics={
            "stage": "decode",
            "reqwest": {
                "is_timeout": False,
                "is_connect": False,
                "is_request": False,
                "is_body": False,
                "is_decode": True,
                "is_redirect": False,
            },
        },
    )


def failed_response(provider: str, error: Any) -> ProviderFailure:
    code, etype, message = errors.error_fields(error if isinstance(error, dict) else {})
    kind = errors.stream_error_kind(code, etype)
    return ProviderFailure(
        kind,
        f"{provider}: response failed ({code or etype or 'no code'}): {message or 'no message'}"[
            :600
        ],
        diagnostics={"stage": "response", "error_code": code},
    )


def parse_usage(usage: Any) -> TokenUsage:
    if not isinstance(usage, dict):
        return TokenUsage()
    details = usage.get("input_tokens_details") or {}
    inp, out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return TokenUsage(
        input_tokens=inp,
        output_tokens=out,
        total_tokens=int(usage.get("total_tokens") or inp + out),
        cache_read_input_tokens=int(details.get("cached_tokens") or 0),
    )


def _parse_call(item: dict[str, Any]) -> ToolCall:
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str) or not isinstance(item.get("name"), str):
        raise _invalid(f"{item.get('type')} output item without call_id or name")
    if item["type"] == "custom_tool_call":
        return ToolCall(
            id=call_id, name=item["name"], raw_arguments=str(item.get("input") or ""), kind="custom"
        )
    raw = item.get("arguments")
    raw = raw if isinstance(raw, str) else json.dumps(raw or {})
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return ToolCall(id=call_id, name=item["name"], raw_arguments=raw)
    return ToolCall(id=call_id, name=item["name"], arguments=parsed)


def parse_response(data: Any, provider: str = "openai") -> ProviderResponse:
    """A Responses `response` object -> ProviderResponse (or the failure it reports)."""
    if not isinstance(data, dict) or not isinstance(data.get("output"), list):
        raise _invalid(f"{provider}: response has no output list")
    if data.get("status") == "failed":
        raise failed_response(provider, data.get("error"))
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in data["output"]:
        if not isinstance(item, dict):
            raise _invalid(f"{provider}: output item is not an object")
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") in ("output_text", "refusal"):
                    texts.append(str(part.get("text") or part.get("refusal") or ""))
        elif kind in ("function_call", "custom_tool_call"):
            calls.append(_parse_call(item))
    reason = (
        (data.get("incomplete_details") or {}).get("reason")
        if data.get("status") == "incomplete"
        else None
    )
    stop = (
        "max_output_tokens"
        if reason == "max_output_tokens"
        else "other"
        if reason
        else "tool_use"
        if calls
        else "end_turn"
    )
    return ProviderResponse(
        text="".join(texts),
        tool_calls=calls,
        usage=parse_usage(data.get("usage")),
        stop_reason=stop,
        response_id=data.get("id"),
    )


# -- continuation: previous_response_id for a strict append-only request -------------------------


def _digest(value: Any) -> str:
    import hashlib

    data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _scope(request: ProviderRequest) -> list[str] | None:
    cache = request.frame.cache
    return [cache.agent_id, cache.prompt_cache_key] if cache is not None else None


def output_as_input(request: ProviderRequest, response: ProviderResponse) -> list[dict[str, Any]]:
    """The response as the next full request will replay it."""
    replay = ProviderRequest(
        model_ref=request.model_ref,
        frame=PromptFrame(system_prompt=""),
        conversation=[AssistantItem(text=response.text, tool_calls=response.tool_calls)],
        tools=request.tools,
    )
    return input_items(replay)


def _saved(path: Path) -> Any:
    """The saved continuation; None when it is missing or cannot be read (the full request is
    sent, and the file rewritten after it)."""
    try:
        return jsonfile.load(path, 1 << 20)
    except jsonfile.Unreadable:
        return None


def incremental(
    params: dict[str, Any], request: ProviderRequest, saved: Any
) -> dict[str, Any] | None:
    """`params` lowered to previous_response_id plus the new input items, when the full input is a
    strict append-only extension of the saved request and response in the same cache scope and
    with the same shape; otherwise None (send the full request)."""
    scope = _scope(request)
    if scope is None or not isinstance(saved, dict) or saved.get("scope") != scope:
        return None
    full = params["input"]
    count = saved.get("count")
    shape = _digest({k: v for k, v in params.items() if k != "input"})
    if (
        saved.get("shape") != shape
        or not isinstance(count, int)
        or not saved.get("response_id")
        or not 0 < count < len(full)
        or _digest(full[:count]) != saved.get("prefix")
    ):
        return None
    return {**params, "input": full[count:], "previous_response_id": saved["response_id"]}


def snapshot(
    params: dict[str, Any], request: ProviderRequest, response: ProviderResponse
) -> dict[str, Any] | None:
    scope = _scope(request)
    if scope is None or not response.response_id:
        return None
    items = list(params["input"]) + output_as_input(request, response)
    return {
        "scope": scope,
        "shape": _digest({k: v for k, v in params.items() if k != "input"}),
        "response_id": response.response_id,
        "count": len(items),
        "prefix": _digest(items),
    }


# -- the transport ------------------------------------------------------------------------------


class OpenAIResponsesProvider:
    name = "openai"

    def __init__(self, model_ref: str, settings: dict[str, Any]) -> None:
        """`settings`: the provider's effective settings (holon.providers.resolve.settings)."""
        self.model_ref = model_ref
        self.key_env: str | None = settings.get("api_key_env")
        self.base_url = str(settings["base_url"])
        self.incremental = bool(settings.get("options", {}).get("incremental_responses")) or (
            os.environ.get("HOLON_OPENAI_INCREMENTAL") == "1"
        )
        self.continuation_path: Any = None

    def use_continuation(self, path: Any) -> None:
        """Keep the last request/response digest at `path`, so a later request that only appends
        can be sent as previous_response_id plus the new items (opt-in: incremental_responses)."""
        if self.incremental:
            self.continuation_path = path

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        api_key = keys.lookup(self.key_env) if self.key_env else None
        if self.key_env and not api_key:
            raise errors.missing_key("openai", self.key_env, self.model_ref)
        params = request_params(request)
        params["max_output_tokens"] = request.max_output_tokens
        path = self.continuation_path
        lowered = incremental(params, request, _saved(path)) if path is not None else None
        if lowered is not None:
            try:
                response = self._send(api_key, lowered, request.timeout_s)
            except ProviderFailure:
                response = None  # any failure of a continuation: fall back to the full request
        else:
            response = None
        if response is None:
            if path is not None:
                _forget(path)
            response = self._send(api_key, params, request.timeout_s)
        if path is not None:
            saved = snapshot(params, request, response)
            if saved is None:
                _forget(path)
            else:
                write_json(path, saved, mode=0o600, durable=False)  # a cache: see _saved
        return response

    def _send(
        self, api_key: str | None, params: dict[str, Any], timeout_s: float
    ) -> ProviderResponse:
        probe = errors.Probe()
        client = sdk_client(api_key, self.base_url, timeout_s, probe)
        try:
            raw = client.responses.with_raw_response.create(
                **params, extra_headers=no_auth(api_key)
            )
            data = json.loads(raw.http_response.text)
        except sdk_errors() as exc:
            raise errors.from_exception(
                exc,
                provider="openai",
                probe=probe,
                url=self.base_url,
                secrets=(api_key,) if api_key else (),
            ) from None
        finally:
            client.close()
        return parse_response(data, "openai")


def _forget(path: Any) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def factory(model_ref: str, settings: dict[str, Any]) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(model_ref, settings)

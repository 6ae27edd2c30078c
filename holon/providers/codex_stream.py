"""`openai-codex/*`: Responses with `stream: true` against the ChatGPT Codex
backend, via the `openai` SDK.

Request differences from `openai/*`: `stream: true`, `store: false`,
`include: []`, `reasoning: null`, and no `max_output_tokens` (the backend
rejects it). Nothing is stored server-side, so every request replays the full
conversation, earlier `function_call` / `custom_tool_call` items included; no
`previous_response_id`. The SSE feed is consumed to its terminal event:
`response.completed` (its `output` rebuilt from `response.output_item.done`
events when it arrives empty), `response.incomplete` (a response whose
stop_reason says why), `response.failed` and `error` events (classified by
their error code). A feed that ends without a terminal event is a
`connection` failure at the body stage.

Credentials: `OPENAI_CODEX_ACCESS_TOKEN` (or the table's `api_key_env`) from the
environment or the keys file (holon.keys), else `tokens.access_token` from the
Codex CLI's `$CODEX_HOME/auth.json` (default `~/.codex/auth.json`); its
`tokens.account_id`, when present, is sent as `chatgpt-account-id`.
Endpoint (decided by holon.providers.resolve.settings): `$OPENAI_CODEX_BASE_URL`,
else `[providers.openai-codex] base_url`, else the ChatGPT backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from holon import keys
from holon.model.conversation import ProviderFailure, ProviderRequest, ProviderResponse
from holon.providers import endpoints, errors
from holon.providers.openai_responses import (
    failed_response,
    parse_response,
    request_params,
    sdk_client,
    sdk_errors,
)

DEFAULT_BASE_URL = endpoints.CODEX_BASE_URL
TOKEN_ENV = endpoints.CODEX_TOKEN_ENV
auth_file = endpoints.codex_auth_file
credentials = endpoints.codex_credentials


def codex_params(request: ProviderRequest) -> dict[str, Any]:
    params = request_params(request)
    params.update({"stream": True, "store": False, "include": [], "reasoning": None})
    return params


def consume(events: Iterable[dict[str, Any]], provider: str = "openai-codex") -> ProviderResponse:
    """Fold an SSE event feed into one ProviderResponse, or raise the failure it reports."""
    done_items: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("type")
        if kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            done_items.append(event["item"])
        elif kind in ("response.completed", "response.incomplete"):
            response = event.get("response")
            if not isinstance(response, dict):
                raise ProviderFailure(
                    "invalid_response",
                    f"{provider}: {kind} without a response object",
                    diagnostics={"stage": "decode"},
                )
            if not response.get("output"):
                response = {**response, "output": done_items}
            return parse_response(response, provider)
        elif kind == "response.failed":
            response = event.get("response") if isinstance(event.get("response"), dict) else {}
            raise failed_response(provider, response.get("error"))
        elif kind == "error":
            raise failed_response(provider, event)
    raise ProviderFailure(
        "connection",
        f"{provider}: event stream ended before a terminal response event",
        diagnostics={
            "stage": "body",
            "reqwest": {
                "is_timeout": False,
                "is_connect": False,
                "is_request": False,
                "is_body": True,
                "is_decode": False,
                "is_redirect": False,
            },
        },
    )


class CodexStreamProvider:
    name = "openai-codex"

    def __init__(self, model_ref: str, settings: dict[str, Any]) -> None:
        """`settings`: the provider's effective settings (holon.providers.resolve.settings)."""
        self.model_ref = model_ref
        self.base_url = str(settings["base_url"])
        self.key_env: str | None = settings.get("api_key_env")

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        token, account, source = credentials(self.key_env)
        if not token:
            how = keys.how_to_set(self.key_env) + ", or " if self.key_env else ""
            raise ProviderFailure(
                "missing_credentials",
                f"openai-codex: no access token for {self.model_ref}; {how}sign in with the "
                f"Codex CLI (looked in {source})",
                diagnostics={"stage": "credentials"},
            )
        headers = {"chatgpt-account-id": account} if account else None
        probe = errors.Probe()
        client = sdk_client(token, self.base_url, request.timeout_s, probe, headers)
        try:
            stream = client.responses.create(**codex_params(request))
            return consume(event.to_dict() for event in stream)
        except ProviderFailure as failure:  # reported inside the feed: say where it came from
            failure.diagnostics.setdefault("url", probe.url or self.base_url)
            raise
        except sdk_errors() as exc:
            raise errors.from_exception(
                exc, provider="openai-codex", probe=probe, url=self.base_url, secrets=(token,)
            ) from None
        finally:
            client.close()


def factory(model_ref: str, settings: dict[str, Any]) -> CodexStreamProvider:
    return CodexStreamProvider(model_ref, settings)

"""What `holon models` lists: the built-in context-window table, the models configured in
config.toml, and (for one provider, on request) what its models endpoint answers, with a timeout.
Stdlib HTTP only: no SDK is imported to list models."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from holon import config, keys
from holon.context.window import DEFAULT_WINDOW, FAMILY_WINDOWS, configured_window
from holon.errors import HolonError, UsageError
from holon.providers import resolve

TIMEOUT_S = 10.0
# transports whose API has a models endpoint: path under base_url and how the key is sent
_ENDPOINTS = {
    "openai_responses": ("/models", "bearer"),
    "openai_chat_completions": ("/models", "bearer"),
    "anthropic_messages": ("/v1/models", "x-api-key"),
}


def table() -> dict[str, Any]:
    """The built-in families with their windows and the models configured in config.toml."""
    configured = config.get("models", {})
    configured = configured if isinstance(configured, dict) else {}
    return {
        "families": [{"family": f, "context_window": w} for f, w in FAMILY_WINDOWS],
        "default_context_window": DEFAULT_WINDOW,
        "configured": [
            {"model_ref": ref, "context_window": configured_window(ref)} for ref in configured
        ],
    }


def listed_by(provider_id: str) -> list[dict[str, Any]]:
    """The models `provider_id`'s endpoint lists, each with the window holon assumes for it."""
    if provider_id not in resolve.known_providers():
        raise UsageError(
            f"no provider {provider_id!r}",
            kind="unknown_provider",
            hint="`holon provider doctor` lists the providers",
        )
    conf = resolve.settings(provider_id)
    endpoint = _ENDPOINTS.get(conf["transport"] or "")
    if endpoint is None or not conf["base_url"]:
        raise UsageError(
            f"provider {provider_id} ({conf['transport']}) has no models endpoint holon can ask",
            kind="no_models_endpoint",
            hint="`holon models` without --provider shows the built-in table",
        )
    ids = _fetch(provider_id, conf, *endpoint)
    return [{"model_ref": f"{provider_id}/{m}", "context_window": configured_window(
        f"{provider_id}/{m}")} for m in ids]  # fmt: skip


def _fetch(provider_id: str, conf: dict[str, Any], path: str, auth: str) -> list[str]:
    headers = {"Accept": "application/json"}
    env = conf["api_key_env"]
    key = keys.lookup(env) if env else None
    if env and not key:
        raise UsageError(
            f"{provider_id} needs the key {env} to list its models",
            kind="missing_credentials",
            hint=keys.how_to_set(env),
        )
    if key and auth == "bearer":
        headers["Authorization"] = f"Bearer {key}"
    elif key:
        headers.update({"x-api-key": key, "anthropic-version": "2023-06-01"})
    url = conf["base_url"].rstrip("/") + path
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=TIMEOUT_S
        ) as r:  # noqa: E501
            doc = json.loads(r.read(8 * 1024 * 1024))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise HolonError(
            f"{provider_id}'s models endpoint did not answer: {_reason(exc)}",
            kind="provider_unreachable",
            hint="check the network and base_url (`holon provider doctor`)",
        ) from None
    data = doc.get("data") if isinstance(doc, dict) else None
    return sorted(str(m["id"]) for m in data or [] if isinstance(m, dict) and m.get("id"))


def _reason(exc: Exception) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    return str(getattr(exc, "reason", exc))

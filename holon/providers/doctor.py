"""`provider_doctor()`: every built-in and configured provider, its
transport, endpoint and credential presence.

Reports whether a credential is present, never its value, and the retry
policy the runner applies. Imports no SDK.
"""

from __future__ import annotations

import os
from typing import Any

from holon import config
from holon.model.conversation import ProviderFailure
from holon.providers import chat_completions, codex_stream, openai_responses, resolve, runner

_TRANSPORT_NAMES = {
    "holon.providers.openai_responses:factory": "openai_responses",
    "holon.providers.anthropic_messages:factory": "anthropic_messages",
    "holon.providers.codex_stream:factory": "openai_codex_stream",
    "holon.providers.chat_completions:factory": "openai_chat_completions",
}


def retry_policy() -> dict[str, Any]:
    return {
        "max_retries": runner.MAX_RETRIES,
        "max_attempts": runner.MAX_ATTEMPTS,
        "retryable": sorted(ProviderFailure.RETRYABLE),
        "fail_fast": [
            "auth",
            "client_error",
            "invalid_response",
            "missing_credentials",
            "unsupported_transport",
        ],
        "terminal": ["context_length_exceeded"],
        "backoff_base_ms": runner.backoff_base_ms(),
        "backoff": "base_ms * 2^(attempt-1), or the provider's retry-after when it sends one",
        "retry_after_cap_s": runner.RETRY_AFTER_CAP_S,
        "sdk_retries": 0,
    }


def _endpoint(
    provider_id: str, target: str, table: dict[str, Any]
) -> tuple[str | None, str | None, bool]:
    """(base_url, credential env var, credentials present) for one provider."""
    if target.startswith("holon.providers.openai_responses"):
        env = str(table.get("api_key_env") or "OPENAI_API_KEY")
        return (
            str(
                table.get("base_url")
                or os.environ.get("OPENAI_BASE_URL")
                or openai_responses.DEFAULT_BASE_URL
            ),
            env,
            bool(os.environ.get(env)),
        )
    if target.startswith("holon.providers.anthropic_messages"):
        env = str(table.get("api_key_env") or "ANTHROPIC_API_KEY")
        return (
            str(
                table.get("base_url")
                or os.environ.get("ANTHROPIC_BASE_URL")
                or "https://api.anthropic.com"
            ),
            env,
            bool(os.environ.get(env)),
        )
    if target.startswith("holon.providers.codex_stream"):
        token, _account, _source = codex_stream.credentials()
        return codex_stream.base_url(table), codex_stream.TOKEN_ENV, bool(token)
    conf = chat_completions.settings(provider_id, table)
    env = conf.get("api_key_env") or None
    return conf.get("base_url"), env, bool(os.environ.get(env)) if env else True


def _entry(provider_id: str, table: dict[str, Any], source: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": provider_id, "source": source}
    transport = table.get("transport")
    target = (
        resolve.CONFIG_TRANSPORTS.get(str(transport))
        if transport
        else resolve.TRANSPORTS.get(provider_id)
    )
    if target is None:
        why = (
            f"unsupported transport {transport!r}"
            if transport
            else "no built-in transport and no transport in its config table"
        )
        return {
            **entry,
            "transport": transport,
            "supported": False,
            "diagnostic": why,
            "failure_kind": "unsupported_transport",
        }
    base_url, env, present = _endpoint(provider_id, target, table)
    entry.update(
        {
            "transport": _TRANSPORT_NAMES[target],
            "supported": True,
            "base_url": base_url,
            "credential_env": env,
            "credentials_required": env is not None,
            "credentials_present": present,
        }
    )
    if not base_url:
        entry.update(
            {
                "supported": False,
                "diagnostic": "no base_url configured",
                "failure_kind": "unsupported_transport",
            }
        )
    return entry


def provider_doctor() -> dict[str, Any]:
    tables = config.get("providers", {})
    tables = tables if isinstance(tables, dict) else {}
    providers = [
        _entry(
            pid,
            tables.get(pid) if isinstance(tables.get(pid), dict) else {},
            "builtin+config" if pid in tables else "builtin",
        )
        for pid in resolve.TRANSPORTS
    ]
    providers += [
        _entry(pid, table if isinstance(table, dict) else {}, "config")
        for pid, table in tables.items()
        if pid not in resolve.TRANSPORTS
    ]
    providers.append(
        {
            "id": "scripted",
            "source": "builtin",
            "transport": "scripted",
            "supported": True,
            "base_url": None,
            "credential_env": None,
            "credentials_required": False,
            "credentials_present": True,
        }
    )
    return {"providers": providers, "retry_policy": retry_policy()}

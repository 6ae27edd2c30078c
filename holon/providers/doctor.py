"""`provider_doctor()`: every built-in and configured provider, its transport, endpoint and where
its credential comes from.

The settings are the merged ones the transports use (`resolve.settings`), so the report and a
turn cannot disagree. Reports where a credential comes from, never its value, and the retry
policy the runner applies. Imports no SDK.
"""

from __future__ import annotations

from typing import Any

from holon import config
from holon.model.conversation import ProviderFailure
from holon.providers import resolve, runner
from holon.providers.errors import redact, url_secrets


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


def _entry(provider_id: str) -> dict[str, Any]:
    conf = resolve.settings(provider_id)
    source = "config"
    if conf["builtin"]:
        source = "builtin+config" if conf["configured"] else "builtin"
    entry: dict[str, Any] = {
        "id": provider_id,
        "source": source,
        "transport": conf["transport"],
        "supported": conf["problem"] is None,
        # every query value and the userinfo hidden: any of them may be a credential
        "base_url": redact(conf["base_url"], url_secrets(conf["base_url"]))
        if conf["base_url"]
        else None,
        "settings_sources": conf["sources"],
    }
    if conf["problem"] is not None:
        return {
            **entry,
            "diagnostic": conf["problem"]["message"],
            "hint": conf["problem"]["hint"],
            "failure_kind": "unsupported_transport",  # what a turn would record
        }
    status = resolve.provider_credentials(provider_id, conf)
    return {
        **entry,
        "credential_env": status["api_key_env"],
        "credentials_required": status["api_key_env"] is not None
        or conf["transport"] == "openai_codex_stream",
        "credentials_present": status["present"],
        "credential_source": status["source"],
    }


def provider_doctor() -> dict[str, Any]:
    tables = config.get("providers", {})
    tables = tables if isinstance(tables, dict) else {}
    configured = [pid for pid in tables if pid not in resolve.BUILTIN and pid != "scripted"]
    providers = [_entry(pid) for pid in [*resolve.BUILTIN, *configured]]
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
            "credential_source": None,
        }
    )
    return {"providers": providers, "retry_policy": retry_policy()}

"""Model ref -> transport. `scripted/PATH` here; network transports are imported only when chosen.

Unknown or unsupported provider ids fail closed with `unsupported_transport`.
"""

from __future__ import annotations

from pathlib import Path

from holon import config
from holon.model.conversation import Provider, ProviderFailure

_CHAT = "holon.providers.chat_completions:factory"
# provider id -> "module:factory"; factory(model_ref, provider_config) -> Provider
TRANSPORTS: dict[str, str] = {
    "openai": "holon.providers.openai_responses:factory",
    "anthropic": "holon.providers.anthropic_messages:factory",
    "openai-codex": "holon.providers.codex_stream:factory",
    # OpenAI-compatible endpoints whose URL and plain bearer key (or none) fit chat completions
    "ollama": _CHAT,
    "openrouter": _CHAT,
    "deepseek": _CHAT,
}
# transport name usable in [providers.NAME] tables -> "module:factory"
CONFIG_TRANSPORTS: dict[str, str] = {
    "openai_chat_completions": _CHAT,
    "openai_responses": "holon.providers.openai_responses:factory",
    "anthropic_messages": "holon.providers.anthropic_messages:factory",
}


def _unsupported(message: str, provider_id: str, **extra: object) -> ProviderFailure:
    return ProviderFailure(
        "unsupported_transport",
        message,
        category="protocol",
        diagnostics={
            "stage": "candidate_selection",
            "provider": provider_id,
            "known_providers": sorted(TRANSPORTS),
            "config_transports": sorted(CONFIG_TRANSPORTS),
            **extra,
        },
    )


def provider_config(provider_id: str) -> dict:
    table = config.get(f"providers.{provider_id}", {})
    return table if isinstance(table, dict) else {}


def make_provider(
    model_ref: str,
    *,
    home: Path | None = None,
    cursor: Path | None = None,
    continuation: Path | None = None,
) -> Provider:
    """The transport for `model_ref`. A scripted path is resolved against `home` too; `cursor` is
    where the scripted provider keeps its position, `continuation` where a transport that can
    continue a previous response keeps what it last sent (the caller's agent home decides
    where)."""
    if "/" not in model_ref:
        raise ProviderFailure(
            "unsupported_transport",
            f"model ref {model_ref!r} is not of the form provider/model",
            category="protocol",
        )
    provider_id = model_ref.split("/", 1)[0]
    if provider_id == "scripted":
        from holon.providers.scripted import ScriptedProvider, resolve_script

        return ScriptedProvider(resolve_script(model_ref.split("/", 1)[1], home), cursor)
    table = provider_config(provider_id)
    target = None
    if table.get("transport"):
        target = CONFIG_TRANSPORTS.get(str(table["transport"]))
        if target is None:
            raise _unsupported(
                f"provider {provider_id!r} uses unsupported transport {table['transport']!r}; "
                f"use one of {', '.join(sorted(CONFIG_TRANSPORTS))}",
                provider_id,
                transport=str(table["transport"]),
            )
    target = target or TRANSPORTS.get(provider_id)
    if target is None:
        raise _unsupported(
            f"no transport for provider {provider_id!r} (model ref {model_ref!r}); add a "
            f"[providers.{provider_id}] table with transport, base_url and api_key_env",
            provider_id,
        )
    import importlib

    module, factory = target.split(":")
    provider = getattr(importlib.import_module(module), factory)(model_ref, table)
    if continuation is not None and hasattr(provider, "use_continuation"):
        provider.use_continuation(continuation)
    return provider

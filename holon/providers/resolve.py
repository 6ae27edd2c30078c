"""Model ref -> transport. `scripted/PATH` here; network transports are imported only when chosen.

Unknown or unsupported provider ids fail closed with `unsupported_transport`.
"""

from __future__ import annotations

from pathlib import Path

from holon.providers.types import Provider, ProviderFailure

# provider id -> "module:factory"; factory(model_ref, provider_config) -> Provider
TRANSPORTS: dict[str, str] = {}
# transport name usable in [providers.NAME] tables -> "module:factory"
CONFIG_TRANSPORTS: dict[str, str] = {}


def provider_config(provider_id: str) -> dict:
    from holon import config

    table = config.get(f"providers.{provider_id}", {})
    return table if isinstance(table, dict) else {}


def make_provider(model_ref: str, *, home: Path | None = None) -> Provider:
    if "/" not in model_ref:
        raise ProviderFailure("unsupported_transport",
                              f"model ref {model_ref!r} is not of the form provider/model", category="protocol")
    provider_id = model_ref.split("/", 1)[0]
    if provider_id == "scripted":
        from holon.providers.scripted import ScriptedProvider, resolve_script

        script = resolve_script(model_ref.split("/", 1)[1], home)
        cursor = home / ".holon" / "scripted_cursor.json" if home is not None else None
        return ScriptedProvider(script, cursor)
    table = provider_config(provider_id)
    target = None
    if table.get("transport"):
        target = CONFIG_TRANSPORTS.get(str(table["transport"]))
        if target is None:
            raise ProviderFailure("unsupported_transport",
                                  f"provider {provider_id!r} uses unsupported transport {table['transport']!r}",
                                  category="protocol")
    target = target or TRANSPORTS.get(provider_id)
    if target is None:
        raise ProviderFailure("unsupported_transport",
                              f"no transport for provider {provider_id!r} (model ref {model_ref!r})",
                              category="protocol")
    import importlib

    module, factory = target.split(":")
    return getattr(importlib.import_module(module), factory)(model_ref, table)

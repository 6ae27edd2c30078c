"""`$HOLON_HOME/config.toml` and the environment: model refs, fallbacks, runtime limits."""

from __future__ import annotations

import os
from typing import Any

from holon.errors import UsageError
from holon.paths import config_path

_cache: dict[str, Any] | None = None


def load() -> dict[str, Any]:
    global _cache
    if _cache is not None:
        return _cache
    path = config_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        _cache = {}
        return _cache
    import tomllib

    try:
        _cache = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{path} is not valid TOML: {exc}",
            kind="invalid_config",
            hint=f"fix the syntax of {path}",
        ) from None
    return _cache


def reset() -> None:
    global _cache
    _cache = None


def get(dotted: str, default: Any = None) -> Any:
    node: Any = load()
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def env_int(name: str, dotted: str | None, default: int) -> int:
    raw = os.environ.get(name)
    if raw is not None and raw.strip():
        try:
            return int(raw)
        except ValueError:
            raise UsageError(
                f"{name} must be an integer, got {raw!r}",
                kind="invalid_config",
                hint=f"unset {name} or set it to a whole number",
            ) from None
    if dotted is not None:
        value = get(dotted)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def default_model() -> str | None:
    return os.environ.get("HOLON_MODEL") or get("model")


def fallback_models() -> list[str]:
    raw = os.environ.get("HOLON_FALLBACK_MODELS")
    if raw is not None:
        return [m.strip() for m in raw.split(",") if m.strip()]
    value = get("fallback_models", [])
    return [str(m) for m in value] if isinstance(value, list) else []

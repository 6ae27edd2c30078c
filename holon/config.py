"""`$HOLON_HOME/config.toml` and the environment: model refs, fallbacks, runtime limits."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from holon.errors import UsageError
from holon.paths import config_path

_cache: dict[str, Any] | None = None
MAX_BYTES = 1 << 20


def load() -> dict[str, Any]:
    global _cache
    if _cache is not None:
        return _cache
    path = config_path()
    data = _read(path)
    if data is None:
        _cache = {}
        return _cache
    import tomllib

    try:
        _cache = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise UsageError(
            f"{path} is not valid TOML: {why}",
            kind="invalid_config",
            hint=f"fix the syntax of {path}",
        ) from None
    return _cache


def _read(path: Path) -> bytes | None:
    """config.toml's bytes (None when missing): a regular file of at most MAX_BYTES, read without
    blocking (a FIFO or a device there is refused, never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unreadable(path, exc.strerror or type(exc).__name__) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unreadable(path, "not a regular file")
        data = os.read(fd, MAX_BYTES + 1)
    except OSError as exc:
        raise _unreadable(path, exc.strerror or type(exc).__name__) from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise _unreadable(path, f"larger than {MAX_BYTES} bytes")
    return data


def _unreadable(path: Path, why: str) -> UsageError:
    return UsageError(
        f"{path} cannot be read: {why}",
        kind="invalid_config",
        hint=f"make {path} a readable TOML file, or remove it to use the defaults",
    )


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
    value = os.environ.get("HOLON_MODEL") or get("model")
    if value is not None and not isinstance(value, str):
        raise UsageError(
            f"model in {config_path()} must be a string (provider/model)",
            kind="invalid_config",
            hint='set it like `model = "openai/gpt-5"`, or remove it',
        )
    return value or None


def fallback_models() -> list[str]:
    raw = os.environ.get("HOLON_FALLBACK_MODELS")
    if raw is not None:
        return [m.strip() for m in raw.split(",") if m.strip()]
    value = get("fallback_models", [])
    return [m for m in value if isinstance(m, str) and m] if isinstance(value, list) else []


# [retention] in config.toml (HOLON_RETENTION_<NAME> overrides): what `holon gc` may remove and
# when a ledger is rotated into a segment. 0 turns a limit off. See docs/architecture.md §5.
RETENTION_DEFAULTS = {
    "ledger_segment_bytes": 64 << 20,  # rotate a ledger into a segment past this size
    "artifact_keep_days": 30,  # artifacts older than this may be removed
    "artifact_max_bytes": 0,  # and the oldest ones while all of them take more than this
    "task_keep_days": 30,  # finished task directories and archived children, by when they ended
    "segment_keep_days": 0,  # old ledger segments (off by default: the ledgers are the record)
}


def retention(name: str) -> int:
    """One [retention] setting, never negative."""
    default = RETENTION_DEFAULTS[name]
    return max(0, env_int(f"HOLON_RETENTION_{name.upper()}", f"retention.{name}", default))

"""The `scripted/PATH` provider: replays assistant rounds from a JSONL file, one round per line.

A line is either a round:
    {"text": "...", "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": "ls"}}],
     "usage": {"input_tokens": 12, "output_tokens": 3}, "stop_reason": "end_turn"}
or a simulated failure:
    {"error": {"status": 429, "kind": "rate_limited", "message": "slow down"}}

The cursor (next line to serve) is persisted per agent in
`.holon/scripted_cursor.json`, keyed by the script's absolute path, and
advances when a line is served, like a real provider call that is spent once
made. An exhausted script fails the request with `Exhausted` (kind `script_exhausted`), which the
turn loop takes as a stop of the turn, not a provider failure. A line that is not one of
the two shapes above (not JSON, wrong types, unknown tool-call fields, NaN, numbers out of range)
fails the request with `invalid_response`, as a real provider's garbage would; a cursor file that
cannot be read is set aside (`scripted_cursor.json.corrupt`) and the script starts again.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

from holon import strictjson
from holon.model.conversation import (
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolCall,
)
from holon.store.atomic import write_json

_STATUS_KINDS = {401: "auth", 403: "auth", 408: "timeout", 429: "rate_limited"}
_STOP_REASONS = ("end_turn", "tool_use", "max_output_tokens", "other")
_CALL_KEYS = {"id", "name", "arguments", "raw_arguments", "kind"}
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
MAX_TOKENS = 10**12  # a usage count above this is not a count
MAX_SCRIPT_BYTES = 64 * 1024 * 1024
MAX_CURSOR_BYTES = 1024 * 1024


class BadLine(ValueError):
    """A script line that is not a round or a failure; the message says what is wrong."""


class Exhausted(ProviderFailure):
    """The script has no round left. Raised through the transport seam (the runner records the
    attempt); the turn loop stops the turn for it (holon.runtime.turn.stops.ScriptExhausted)."""

    def __init__(self, message: str) -> None:
        super().__init__("script_exhausted", message, category="runtime")


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of regular file `path` (at most `limit`); OSError/ValueError otherwise; never
    blocks on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


class ScriptedProvider:
    name = "scripted"

    def __init__(self, script: Path, cursor_file: Path | None) -> None:
        self.script = script
        self.cursor_file = cursor_file

    def _lines(self) -> list[str]:
        try:
            text = _read_regular(self.script, MAX_SCRIPT_BYTES).decode("utf-8")
        except FileNotFoundError:
            raise ProviderFailure(
                "invalid_response", f"script not found: {self.script}", category="protocol"
            ) from None
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            why = exc.strerror if isinstance(exc, OSError) else str(exc)[:120]
            raise ProviderFailure(
                "invalid_response",
                f"script {self.script} cannot be read: {why}",
                category="protocol",
            ) from None
        return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]

    def _cursor_data(self) -> dict[str, Any]:
        """The cursor file's map; a corrupt file is set aside and the map starts empty."""
        assert self.cursor_file is not None
        try:
            data = strictjson.loads(_read_regular(self.cursor_file, MAX_CURSOR_BYTES))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and all(_is_count(v) for v in data.values()):
            return data
        try:
            os.replace(self.cursor_file, f"{self.cursor_file}.corrupt")
        except OSError:
            pass
        return {}

    def _cursor(self) -> int:
        if self.cursor_file is None:
            return getattr(self, "_mem_cursor", 0)
        return int(self._cursor_data().get(os.fspath(self.script), 0))

    def _advance(self, value: int) -> None:
        if self.cursor_file is None:
            self._mem_cursor = value
            return
        data = self._cursor_data()
        data[os.fspath(self.script)] = value
        # no fsync: the script stands in for a remote model, whose place in a conversation is
        # not this disk's to keep; a cursor a power loss left unreadable is set aside (above)
        write_json(self.cursor_file, data, durable=False)

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        lines = self._lines()
        cursor = self._cursor()
        if cursor >= len(lines):
            raise Exhausted(
                f"scripted provider has no round left in {self.script} ({len(lines)} rounds served)"
            )
        self._advance(cursor + 1)
        where = f"line {cursor + 1} of {self.script}"
        try:
            line = strictjson.loads(lines[cursor])
        except strictjson.InvalidJson as exc:
            raise ProviderFailure(
                "invalid_response", f"{where} is not JSON: {exc}", category="protocol"
            ) from None
        if not isinstance(line, dict):
            raise ProviderFailure(
                "invalid_response", f"{where} is not an object", category="protocol"
            )
        try:
            if "error" in line:
                raise _failure(line["error"])
            return _round(line, cursor)
        except ValueError as exc:  # BadLine, InvalidJson, pydantic's ValidationError
            raise ProviderFailure(
                "invalid_response",
                f"{where} is not a scripted round: {' '.join(str(exc).split())[:200]}",
                category="protocol",
            ) from None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS


def _text(value: Any, what: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BadLine(f"{what} is not a string")
    return value


def _failure(err: Any) -> ProviderFailure:
    if not isinstance(err, dict):
        raise BadLine("error is not an object")
    status = err.get("status")
    if status is not None and not (_is_count(status) and 100 <= status <= 599):
        raise BadLine("error.status is not an HTTP status")
    retry = err.get("retry_after_s")
    if retry is not None and (
        isinstance(retry, bool)
        or not isinstance(retry, int | float)
        or not math.isfinite(retry)
        or not 0 <= retry <= 86400
    ):
        raise BadLine("error.retry_after_s is not a number of seconds (0-86400)")
    kind = _text(err.get("kind"), "error.kind") or _STATUS_KINDS.get(status or 0)
    kind = kind or ("server_error" if status and status >= 500 else "client_error")
    message = _text(err.get("message"), "error.message") or f"scripted failure ({kind})"
    return ProviderFailure(kind[:64], message[:2000], status=status, retry_after_s=retry)


def _call(call: Any, cursor: int, i: int) -> ToolCall:
    if not isinstance(call, dict):
        raise BadLine(f"tool_calls[{i}] is not an object")
    unknown = sorted(str(k)[:40] for k in call if k not in _CALL_KEYS)
    if unknown:
        raise BadLine(f"tool_calls[{i}] has unknown fields: {', '.join(unknown[:5])}")
    args = call.get("arguments")
    raw = _text(call.get("raw_arguments"), f"tool_calls[{i}].raw_arguments")
    if isinstance(args, str):
        raw, args = args, None
    if args is not None and not isinstance(args, dict):
        raise BadLine(f"tool_calls[{i}].arguments is not an object or a string")
    kind = call.get("kind", "function")
    if kind not in ("function", "custom"):
        raise BadLine(f"tool_calls[{i}].kind is not function or custom")
    return ToolCall(
        id=_text(call.get("id"), f"tool_calls[{i}].id") or f"call_s{cursor}_{i}",
        name=_text(call.get("name", ""), f"tool_calls[{i}].name", optional=False) or "",
        arguments=args,
        raw_arguments=raw,
        kind=kind,
    )


def _round(line: dict, cursor: int) -> ProviderResponse:
    tool_calls = line.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise BadLine("tool_calls is not a list")
    calls = [_call(call, cursor, i) for i, call in enumerate(tool_calls)]
    usage = line.get("usage") or {}
    if not isinstance(usage, dict) or not all(_is_count(usage.get(k, 0)) for k in _USAGE_KEYS):
        raise BadLine("usage is not an object of token counts (0-10^12)")
    stop = line.get("stop_reason") or ("tool_use" if calls else "end_turn")
    if stop not in _STOP_REASONS:
        raise BadLine(f"stop_reason is not one of {', '.join(_STOP_REASONS)}")
    return ProviderResponse(
        text=_text(line.get("text"), "text") or "",
        tool_calls=calls,
        usage=TokenUsage.of(
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
            cache_read_input_tokens=usage.get("cache_read_input_tokens", 0),
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens", 0),
        ),
        stop_reason=stop,
        response_id=f"scripted-{cursor + 1}",
    )

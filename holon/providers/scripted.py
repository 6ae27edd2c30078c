"""The `scripted/PATH` provider: replays assistant rounds from a JSONL file, one round per line.

A line is either a round:
    {"text": "...", "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": "ls"}}],
     "usage": {"input_tokens": 12, "output_tokens": 3}, "stop_reason": "end_turn"}
or a simulated failure:
    {"error": {"status": 429, "kind": "rate_limited", "message": "slow down"}}

The cursor (next line to serve) is persisted per agent in
`.holon/scripted_cursor.json`, keyed by the script's absolute path, and
advances when a line is served, like a real provider call that is spent once
made. An exhausted script fails the request with `script_exhausted`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from holon.model.conversation import (
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolCall,
)
from holon.store.atomic import read_json, write_json

_STATUS_KINDS = {401: "auth", 403: "auth", 408: "timeout", 429: "rate_limited"}


def resolve_script(path: str, home: Path | None) -> Path:
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    if p.exists() or home is None:
        return p.absolute()
    return (home / p).absolute()


class ScriptedProvider:
    name = "scripted"

    def __init__(self, script: Path, cursor_file: Path | None) -> None:
        self.script = script
        self.cursor_file = cursor_file

    def _lines(self) -> list[str]:
        try:
            text = self.script.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProviderFailure(
                "invalid_response", f"script not found: {self.script}", category="protocol"
            ) from None
        return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]

    def _cursor(self) -> int:
        if self.cursor_file is None:
            return getattr(self, "_mem_cursor", 0)
        data = read_json(self.cursor_file, {}) or {}
        return int(data.get(os.fspath(self.script), 0))

    def _advance(self, value: int) -> None:
        if self.cursor_file is None:
            self._mem_cursor = value
            return
        data = read_json(self.cursor_file, {}) or {}
        data[os.fspath(self.script)] = value
        write_json(self.cursor_file, data)

    def complete(self, request: ProviderRequest) -> ProviderResponse:
        lines = self._lines()
        cursor = self._cursor()
        if cursor >= len(lines):
            raise ProviderFailure(
                "script_exhausted",
                f"scripted provider has no round left in {self.script} "
                f"({len(lines)} rounds served)",
                category="runtime",
            )
        self._advance(cursor + 1)
        try:
            line = json.loads(lines[cursor])
        except ValueError as exc:
            raise ProviderFailure(
                "invalid_response",
                f"line {cursor + 1} of {self.script} is not JSON: {exc}",
                category="protocol",
            ) from None
        if not isinstance(line, dict):
            raise ProviderFailure(
                "invalid_response",
                f"line {cursor + 1} of {self.script} is not an object",
                category="protocol",
            )
        if "error" in line:
            err = line["error"] or {}
            status = err.get("status")
            kind = (
                err.get("kind")
                or _STATUS_KINDS.get(status)
                or ("server_error" if isinstance(status, int) and status >= 500 else "client_error")
            )
            raise ProviderFailure(
                kind,
                err.get("message") or f"scripted failure ({kind})",
                status=status,
                retry_after_s=err.get("retry_after_s"),
            )
        return _round(line, cursor)


def _round(line: dict, cursor: int) -> ProviderResponse:
    calls = []
    for i, call in enumerate(line.get("tool_calls") or []):
        args = call.get("arguments")
        raw = call.get("raw_arguments")
        if isinstance(args, str):
            raw, args = args, None
        calls.append(
            ToolCall(
                id=call.get("id") or f"call_s{cursor}_{i}",
                name=call.get("name", ""),
                arguments=args,
                raw_arguments=raw,
                kind=call.get("kind", "function"),
            )
        )
    usage = line.get("usage") or {}
    stop = line.get("stop_reason") or ("tool_use" if calls else "end_turn")
    return ProviderResponse(
        text=line.get("text") or "",
        tool_calls=calls,
        usage=TokenUsage.of(
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens", 0)),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens", 0)),
        ),
        stop_reason=stop,
        response_id=f"scripted-{cursor + 1}",
    )

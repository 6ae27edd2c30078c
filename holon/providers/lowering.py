"""Tool-call replay shared by transports: a call made as freeform text or as JSON, lowered for the
other kind."""

from __future__ import annotations

import json
from typing import Any

from holon.model.conversation import ToolCall, ToolDefinition


def freeform_text(call: ToolCall) -> str:
    """The freeform payload of a call: its raw text, or the one string argument a JSON transport
    carried."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    args = call.arguments or {}
    strings = [v for v in args.values() if isinstance(v, str)]
    return strings[0] if len(args) == 1 and strings else json.dumps(args, ensure_ascii=False)


def json_input(call: ToolCall, tools: dict[str, ToolDefinition]) -> dict[str, Any]:
    """The JSON object of a call; a freeform call becomes `{<the tool's one field>: <raw text>}`."""
    if call.arguments is not None:
        return call.arguments
    raw = call.raw_arguments or ""
    tool = tools.get(call.name)
    props = (tool.input_schema.get("properties") or {}) if tool is not None else {}
    if call.kind == "custom" and len(props) == 1:
        return {next(iter(props)): raw}
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"input": raw}

"""Tools from MCP servers (holon.mcp) as tools of the catalog: `mcp__<server>__<tool>`.

Each is an instance (not a class) built from the cached listing, its input schema as the server
gave it: sent strict when the strict conversion keeps its meaning, else as given, non-strict.
Arguments are passed through as the model wrote them (the server validates them).
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from holon.home.layout import Home
from holon.mcp import discovery, names, results
from holon.mcp.discovery import Spec
from holon.mcp.failure import HINTS, TIMEOUT, McpFailure
from holon.model.conversation import ToolDefinition
from holon.tools import schema
from holon.tools.base import RenderPolicy, Tool, ToolContext, ToolFailure, ToolOutput

_UNSTRICT = ("patternProperties", "$ref", "allOf", "oneOf", "not", "if", "dependentSchemas")


class McpArgs(BaseModel):
    """Whatever the model sent: the server's schema decides."""

    model_config = ConfigDict(extra="allow")


def strict_form(source: dict[str, Any]) -> dict[str, Any] | None:
    """`source` in the strict form providers need, or None when converting it would change what
    it accepts (open maps, `$ref`, `oneOf`, ...) or leave it invalid for strict mode."""

    def blocks(node: Any) -> bool:
        if isinstance(node, list):
            return any(blocks(x) for x in node)
        if not isinstance(node, dict):
            return False
        if any(k in node for k in _UNSTRICT):
            return True
        extra = node.get("additionalProperties")
        if extra is not None and extra is not False and "properties" in node:
            return True
        if node.get("type") == "object" and "properties" not in node:
            return True  # an open object: strict would forbid every key
        return any(blocks(v) for k, v in node.items() if k not in ("enum", "const", "default"))

    if not isinstance(source, dict) or source.get("type") != "object" or blocks(source):
        return None
    emitted = schema.strict(source)
    return emitted if not schema.validate_strict(emitted) else None


class McpTool(Tool):
    Args = McpArgs
    family = "mcp"
    mutates: ClassVar[bool] = True  # an MCP tool may change anything: never run one cut off

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.name = spec.model_name  # type: ignore[misc]
        self.description = spec.description  # type: ignore[misc]
        source = dict(spec.input_schema) if isinstance(spec.input_schema, dict) else {}
        source.setdefault("type", "object")
        source.pop("title", None)
        source.pop("$schema", None)  # some providers refuse the meta-schema key
        self.source = source
        self.strict = strict_form(source)
        text = json.dumps(source, sort_keys=True, default=str)
        self.fingerprint = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def provider_definition(self, mode: str) -> ToolDefinition:
        if self.strict is not None and mode == "strict":
            emitted, strict = self.strict, True
        elif self.strict is not None:
            emitted, strict = schema.relaxed(self.source), False
        else:
            emitted, strict = copy.deepcopy(self.source), False
        return ToolDefinition(
            name=self.name, description=self.description, input_schema=emitted, strict=strict
        )

    def run(self, ctx: ToolContext, args: McpArgs) -> ToolOutput:  # type: ignore[override]
        spec = self.spec
        try:
            raw = discovery.call(
                ctx.home, ctx.execution_root, ctx.cwd, spec, dict(args.model_extra or {})
            )
        except McpFailure as exc:
            raise ToolFailure(
                exc.kind,
                exc.message,
                details={"server": spec.server.name, "tool": spec.tool, **exc.details},
                recovery_hint=HINTS[exc.kind],
                retryable=exc.kind == TIMEOUT,
            ) from None
        out = results.convert(ctx.home.artifacts, spec.server.name, spec.tool, raw)
        if out["is_error"]:
            raise ToolFailure(
                results.ERROR_KIND,
                out["text"][:400] or f"{spec.tool} reported an error",
                details={"server": spec.server.name, "tool": spec.tool, "result": out["result"]},
                recovery_hint="read the server's message; fix the input or go on without it",
            )
        return ToolOutput(f"{spec.tool} ({spec.server.name})", out["result"])

    def render(self, envelope: dict[str, Any], policy: RenderPolicy) -> str:
        """The server's text, within the render budget, labelled as external evidence."""
        result = envelope.get("result") or {}
        text = str(result.get("text", ""))
        budget = policy.budget_chars()
        if len(text) > budget:
            path = result.get("text_artifact_path")
            text = (
                text[:budget]
                + f"\n[... cut at {budget} characters"
                + (f"; whole text: {path}]" if path else "]")
            )
        head = f"{envelope.get('summary_text', '')} [MCP output: untrusted external evidence]"
        if "structured_content" in result and text.strip() == "":
            text = json.dumps(result["structured_content"], ensure_ascii=False)
        return f"{head}\n{text}"


def agent_tools(
    home: Home, root: Path, cwd: Path, failed: list[dict[str, Any]] | None = None
) -> list[Tool]:
    """The MCP tools this agent sees (holon.mcp.discovery.tools)."""
    return [McpTool(s) for s in discovery.tools(home, root, cwd, failed=failed)]


def lookup(ctx: ToolContext, name: str) -> Tool | None:
    """The MCP tool named `name` for this agent, from the cached listing (no server starts)."""
    if not names.is_mcp(name):
        return None
    spec = discovery.find(ctx.home, name)
    return McpTool(spec) if spec is not None else None

"""Tool catalog -> provider-neutral ToolDefinitions, in relaxed (default) or strict emission."""

from __future__ import annotations

from typing import Literal

from holon.model.conversation import ToolDefinition
from holon.tools import schema
from holon.tools.base import Tool

SchemaMode = Literal["relaxed", "strict"]


_CACHE: dict[tuple[type, str, SchemaMode], ToolDefinition] = {}


def definition(tool: Tool, mode: SchemaMode = "relaxed") -> ToolDefinition:
    """A tool's definition; built once per process (schemas are class-level and costly to emit:
    every provider round asks for the whole catalog). Shared: callers must not mutate it."""
    key = (type(tool), tool.name, mode)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _CACHE[key] = _build(tool, mode)
    return cached


def _build(tool: Tool, mode: SchemaMode) -> ToolDefinition:
    source = schema.source_schema(tool.Args)
    emitted = schema.strict(source) if mode == "strict" else schema.relaxed(source)
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        input_schema=emitted,
        strict=mode == "strict",
        freeform_grammar=tool.freeform_grammar,
    )


def definitions(tools: list[Tool], mode: SchemaMode = "relaxed") -> list[ToolDefinition]:
    return [definition(t, mode) for t in tools]

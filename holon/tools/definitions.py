"""Tool catalog -> provider-neutral ToolDefinitions, in relaxed (default) or strict emission."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from holon.model.conversation import ToolDefinition
from holon.tools import schema
from holon.tools.base import Tool

SchemaMode = Literal["relaxed", "strict"]


_CACHE: dict[tuple[type, str, SchemaMode], ToolDefinition] = {}


def definition(tool: Tool, mode: SchemaMode = "relaxed") -> ToolDefinition:
    """A tool's definition; built once per process (schemas are class-level and costly to emit:
    every provider round asks for the whole catalog). Shared: callers must not mutate it."""
    own = tool.provider_definition(mode)
    if own is not None:
        return own
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


@dataclass(frozen=True)
class Catalog:
    """The tool definitions one model sees, with their canonical JSON (what the request's size
    estimate and cache key are computed from) and its digest. Shared: callers must not mutate."""

    defs: list[ToolDefinition]
    json: str
    digest: str


_CATALOGS: dict[tuple[object, ...], Catalog] = {}
_BY_DIGEST: dict[str, Catalog] = {}


def catalog(tools: list[Tool], mode: SchemaMode = "relaxed", *, freeform: bool = True) -> Catalog:
    """The catalog of `tools` as offered to a provider (`freeform`: whether it takes a custom
    grammar), built once per process: every provider round asks for it. Keyed by the tool
    classes and names, so a plugin registered later makes a new catalog; catalogs with the same
    digest are one object."""
    key = (tuple((type(t), t.name, t.fingerprint) for t in tools), mode, freeform)
    found = _CATALOGS.get(key)
    if found is None:
        defs = definitions(tools, mode)
        if not freeform:  # the grammar is never sent to a provider without custom tools
            defs = [d.model_copy(update={"freeform_grammar": None}) for d in defs]
        text = json.dumps([d.model_dump() for d in defs], sort_keys=True)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        found = _CATALOGS[key] = _BY_DIGEST.setdefault(digest, Catalog(defs, text, digest))
    return found

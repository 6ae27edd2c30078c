"""ToolDefinitions: relaxed (default) and strict emission of every built-in tool."""

from __future__ import annotations

import pytest

from holon.model.conversation import ToolDefinition
from holon.tools import registry, schema
from holon.tools.definitions import definition, definitions

TOOLS = registry.all_tools()


def _objects(node):
    """Every object schema inside `node`, depth first."""
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from _objects(item)


def _keys(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_relaxed_definition_keeps_the_honest_schema(tool):
    d = definition(tool)
    assert isinstance(d, ToolDefinition)
    assert (d.name, d.description, d.strict) == (tool.name, tool.description, False)
    assert d.freeform_grammar == tool.freeform_grammar
    source = schema.source_schema(tool.Args)
    assert d.input_schema == schema.relaxed(source)
    assert sorted(d.input_schema.get("required", [])) == sorted(source.get("required", []))
    assert all(o["additionalProperties"] is False for o in _objects(d.input_schema))


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_strict_definition_requires_every_property(tool):
    d = definition(tool, "strict")
    assert d.strict is True and schema.validate_strict(d.input_schema) == []
    assert d.input_schema["required"] == list(d.input_schema["properties"])
    assert "default" not in set(_keys(d.input_schema))


def test_optional_fields_become_nullable_only_in_strict_mode():
    tool = registry.get("ExecCommand")
    relaxed = definition(tool).input_schema
    strict = definition(tool, "strict").input_schema
    assert relaxed["required"] == ["cmd"]
    workdir = {k: v for k, v in relaxed["properties"]["workdir"].items() if k != "default"}
    assert workdir == strict["properties"]["workdir"]  # already nullable: only the default goes
    assert relaxed["properties"]["login"]["type"] == "boolean"
    assert strict["properties"]["login"]["type"] == ["boolean", "null"]
    assert "default" in relaxed["properties"]["login"]
    assert "default" not in strict["properties"]["login"]
    assert None in strict["properties"]["duplicate_policy"]["enum"]


def test_definitions_keep_order_and_only_apply_patch_is_freeform():
    defs = definitions(TOOLS, "strict")
    assert [d.name for d in defs] == [t.name for t in TOOLS]
    assert all(d.strict for d in defs)
    assert {d.name for d in defs if d.freeform_grammar} == {"ApplyPatch"}
    assert definitions([]) == []


def test_emission_does_not_mutate_the_source_schema():
    tool = registry.get("ExecCommandBatch")
    before = schema.source_schema(tool.Args)
    definition(tool, "strict")
    definition(tool, "relaxed")
    assert schema.source_schema(tool.Args) == before
    item = definition(tool, "strict").input_schema["properties"]["commands"]["items"]
    assert item["additionalProperties"] is False and item["required"] == list(item["properties"])


def test_the_catalog_is_built_once_per_process_and_named_by_its_digest():
    import hashlib
    import json

    from holon.tools.definitions import catalog

    first = catalog(registry.all_tools(), freeform=False)
    assert catalog(registry.all_tools(), freeform=False) is first  # not rebuilt each round
    assert registry.get("ExecCommand") is registry.get("ExecCommand")
    assert first.json == json.dumps([d.model_dump() for d in first.defs], sort_keys=True)
    assert first.digest == hashlib.sha256(first.json.encode()).hexdigest()
    assert all(d.freeform_grammar is None for d in first.defs)
    grammar = catalog(registry.all_tools(), freeform=True)
    assert grammar.digest != first.digest
    assert any(d.freeform_grammar for d in grammar.defs)
    assert [d.name for d in grammar.defs] == [d.name for d in first.defs]

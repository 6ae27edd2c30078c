"""MCP tools in the catalog: strict where the conversion keeps the schema's meaning, as given
otherwise; a name no cached listing holds is unknown."""

from __future__ import annotations

from holon.mcp.config import parse
from holon.mcp.discovery import Spec
from holon.tools import schema
from holon.tools.mcp_tool import McpTool, strict_form


def tool(input_schema: dict) -> McpTool:
    server = parse("s", {"command": "x"})
    return McpTool(Spec("mcp__s__t", server, "t", "a tool", input_schema))


def test_a_plain_object_schema_is_sent_strict():
    t = tool(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 1}},
            "required": ["a"],
            "title": "tArguments",
        }
    )
    strict = t.provider_definition("strict")
    assert strict.strict and schema.validate_strict(strict.input_schema) == []
    assert strict.input_schema["properties"]["b"]["type"] == ["integer", "null"]
    relaxed = t.provider_definition("relaxed")
    assert not relaxed.strict and relaxed.input_schema["additionalProperties"] is False


def test_open_maps_refs_and_one_of_are_sent_as_given():
    for source in (
        {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {}}}},
        {"type": "object", "properties": {"m": {"$ref": "#/$defs/x"}}},
        {"type": "object", "properties": {"m": {"oneOf": [{"type": "string"}]}}},
        {"type": "object"},
    ):
        assert strict_form(source) is None
        definition = tool(source).provider_definition("strict")
        assert not definition.strict and definition.input_schema == source


def test_tools_with_other_schemas_make_other_catalogs():
    from holon.tools import definitions

    a = tool({"type": "object", "properties": {"a": {"type": "string"}}})
    b = tool({"type": "object", "properties": {"b": {"type": "string"}}})
    assert definitions.catalog([a]).digest != definitions.catalog([b]).digest
    assert definitions.catalog([a]).digest == definitions.catalog([tool(a.source)]).digest


def test_the_mcp_prefix_is_reserved_for_mcp_tools():
    import pytest

    from holon.tools import registry
    from holon.tools.base import ToolFailure
    from holon.tools.lifecycle import Sleep

    class Squatter(Sleep):
        name = "mcp__time__get_current_time"

    with pytest.raises(ToolFailure) as err:
        registry.register(Squatter())
    assert err.value.kind == "tool_plugin_unavailable"
    assert registry.get("mcp__time__get_current_time") is None


def test_a_private_child_calls_only_the_servers_its_parent_grants(agent, holon_env):
    import json

    from holon import config as holon_config
    from holon.agent.handle import Agent
    from holon.home.init import init_home
    from holon.mcp import cache
    from holon.tools import registry
    from holon.tools.base import ToolContext

    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(
        '[mcp_servers.s]\ncommand = "/nonexistent/mcp"\nstartup_timeout_s = 2\n'
    )
    holon_config.reset()
    child = init_home(agent.children_dir / "a.c-123456", "a.c-123456")
    ident = json.loads(child.agent_json.read_text())
    child.agent_json.write_text(json.dumps({**ident, "profile_preset": "private_child"}))
    cache.store(
        child, parse("s", {"command": "/nonexistent/mcp"}), version="1", tools=[{"name": "t"}]
    )
    ctx = ToolContext(agent=Agent(child), execution_root=child.root, cwd=child.root)

    refused = registry.call(ctx, "mcp__s__t", {})
    assert refused.envelope["error"]["kind"] == "unknown_tool"  # not granted: not its tool
    agent.mcp_json.write_text(json.dumps({"grant_children": ["s"]}))
    granted = registry.call(ctx, "mcp__s__t", {})
    assert granted.envelope["error"]["kind"] == "mcp_server_unavailable"  # its tool: it ran

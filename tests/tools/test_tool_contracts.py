"""Every built-in tool: source and strict schemas are valid, strict schemas match golden files."""

from __future__ import annotations

import json

import pytest
from helpers import check_golden

from holon.tools import registry, schema

TOOLS = registry.all_tools()


def test_catalog_has_the_command_family():
    names = {t.name for t in TOOLS}
    assert {
        "ExecCommand",
        "ExecCommandBatch",
        "TaskStatus",
        "TaskOutput",
        "TaskInput",
        "TaskStop",
        "TaskList",
    } <= names


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_source_and_strict_schema(tool):
    source = schema.source_schema(tool.Args)
    assert source["type"] == "object" and "$defs" not in json.dumps(source)
    required = [n for n, f in tool.Args.model_fields.items() if f.is_required()]
    assert sorted(source.get("required", [])) == sorted(required)  # the source schema is honest
    strict = schema.strict(source)
    assert schema.validate_strict(strict) == []
    assert schema.relaxed(source)["additionalProperties"] is False
    check_golden(
        f"schemas/{tool.name}.strict.json", json.dumps(strict, indent=2, sort_keys=True) + "\n"
    )


def test_batch_items_do_not_advertise_tty():
    item = schema.source_schema(registry.get("ExecCommandBatch").Args)["properties"]["commands"][
        "items"
    ]
    assert set(item["properties"]) == {
        "cmd",
        "workdir",
        "shell",
        "login",
        "yield_time_ms",
        "max_output_tokens",
    }


def test_unknown_and_dormant_fields_are_errors(tmp_path):
    from holon.agent.handle import Agent
    from holon.home.layout import Home
    from holon.tools.base import ToolContext

    ctx = ToolContext(agent=Agent(Home(tmp_path, "a")), execution_root=tmp_path, cwd=tmp_path)
    env = registry.call(ctx, "ExecCommand", {"cmd": "true", "bogus": 1}).envelope
    assert (
        env["error"]["kind"] == "invalid_tool_input" and env["error"]["details"]["field"] == "bogus"
    )
    env = registry.call(
        ctx, "ExecCommandBatch", {"commands": [{"cmd": "true", "tty": True}]}
    ).envelope
    assert env["error"]["kind"] == "invalid_tool_input"
    env = registry.call(
        ctx, "TaskOutput", {"task_id": "x", "block": False, "timeout_ms": 5}
    ).envelope
    assert (
        env["error"]["kind"] == "invalid_tool_input"
        and env["error"]["details"]["field"] == "timeout_ms"
    )


def test_budget_default_cap_and_config(monkeypatch):
    from holon.runtime.turn.context import render_policy

    assert render_policy().budget_chars() == 32000
    assert render_policy().budget_chars(10**6) == 64000 * 4
    monkeypatch.setenv("HOLON_DEFAULT_TOOL_OUTPUT_TOKENS", "100")
    assert render_policy().budget_chars() == 400

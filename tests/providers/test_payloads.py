"""Request payloads: golden files per transport, and the full tool catalog in strict mode."""

from __future__ import annotations

import os
import subprocess
import sys
from enum import Enum
from pathlib import Path

import pytest
from provider_kits import FRAME, KITS, TOOLS
from pydantic import BaseModel, Field

from holon.model.conversation import (
    AssistantItem,
    ProviderRequest,
    ToolCall,
    ToolResultItem,
    UserItem,
)
from holon.providers.resolve import make_provider
from holon.tools import registry
from holon.tools.base import Tool, ToolArgs
from holon.tools.definitions import definitions
from holon.tools.schema import validate_strict

kits = pytest.mark.parametrize("kit", KITS, ids=[k.transport for k in KITS])

CONVERSATION = [
    UserItem(text="List the files, then add hello."),
    AssistantItem(
        text="Listing, then patching.",
        tool_calls=[
            ToolCall(id="call_exec_1", name="ExecCommand", arguments={"cmd": "ls"}),
            ToolCall(
                id="call_patch_1",
                name="ApplyPatch",
                raw_arguments="*** Begin Patch\n+hello\n*** End Patch",
                kind="custom",
            ),
        ],
    ),
    ToolResultItem(call_id="call_exec_1", tool_name="ExecCommand", content="a.txt"),
    ToolResultItem(
        call_id="call_patch_1",
        tool_name="ApplyPatch",
        content="error: no such file",
        is_error=True,
        kind="custom",
    ),
]


def send(kit, server, monkeypatch, tools, conversation=CONVERSATION):
    kit.setup(server, monkeypatch)
    kit.push_ok(server, kit.text_round())
    provider = make_provider(kit.ref("model-golden"))
    provider.complete(
        ProviderRequest(
            model_ref=kit.ref("model-golden"),
            frame=FRAME,
            conversation=conversation,
            tools=tools,
            max_output_tokens=4096,
            timeout_s=2.0,
        )
    )
    return server.requests[-1]


@kits
def test_request_payload_matches_golden(kit, server, monkeypatch, golden):
    recorded = send(kit, server, monkeypatch, TOOLS)
    golden(kit.transport, {"path": recorded.path, "body": recorded.json})


# -- strict mode over the whole catalog ----------------------------------------------------------


class Mode(str, Enum):
    fast = "fast"
    careful = "careful"


class Limits(BaseModel):
    max_lines: int | None = None
    mode: Mode | None = None


class Step(BaseModel):
    name: str
    args: list[str] = Field(default_factory=list)
    limits: Limits | None = None


class PlanArgs(ToolArgs):
    title: str
    steps: list[Step]
    priority: Mode = Mode.fast
    labels: list[str] | None = None
    owner: dict[str, str] | None = None


class FixturePlan(Tool):
    name = "FixturePlan"
    description = "Nested objects, optional fields, enums and arrays."
    Args = PlanArgs


class NoteArgs(ToolArgs):
    text: str
    tags: list[Mode] = Field(default_factory=list)
    pinned: bool | None = None


class FixtureNote(Tool):
    name = "FixtureNote"
    description = "Arrays of enums and an optional bool."
    Args = NoteArgs


@kits
def test_strict_catalog_schemas_pass_validation(kit, server, monkeypatch):
    tools = definitions([*registry.all_tools(), FixturePlan(), FixtureNote()], mode="strict")
    recorded = send(kit, server, monkeypatch, tools, [UserItem(text="hi")])
    schemas = kit.schemas_sent(recorded.json)
    assert len(schemas) >= 2
    for schema in schemas:
        assert validate_strict(schema) == [], schema
    plan = next(s for s in schemas if "steps" in s.get("properties", {}))
    assert sorted(plan["required"]) == ["labels", "owner", "priority", "steps", "title"]
    step = plan["properties"]["steps"]["items"]
    assert step["additionalProperties"] is False and sorted(step["required"]) == [
        "args",
        "limits",
        "name",
    ]
    if kit.transport in ("openai_responses", "openai_codex_stream"):
        assert all(
            t["strict"] is True for t in kit.tools_sent(recorded.json) if t["type"] == "function"
        )
    if kit.transport == "anthropic_messages":
        assert all(t["strict"] is True for t in kit.tools_sent(recorded.json))


def test_provider_core_imports_no_sdk():
    code = (
        "import sys\n"
        "import holon.providers.resolve, holon.providers.runner, holon.model.conversation\n"
        "import holon.providers.doctor, holon.providers.errors, holon.providers.openai_responses\n"
        "import holon.providers.anthropic_messages, holon.providers.codex_stream\n"
        "import holon.providers.chat_completions\n"
        "holon.providers.doctor.provider_doctor()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'openai', 'anthropic', 'httpx2', 'httpx'}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root, env=env
    )
    assert out.stdout.strip() == "[]"

"""The built-in catalog: every entry resolves to a Tool of that name, imported only when used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from helpers import subprocess_env

from holon.tools import registry
from holon.tools.base import Tool, ToolArgs
from holon.tools.catalog import BUILTINS

FAMILIES = {
    "ApplyPatch": "file",
    "ExecCommand": "command",
    "ExecCommandBatch": "command",
    "TaskStatus": "task",
    "TaskOutput": "task",
    "TaskInput": "task",
    "TaskStop": "task",
    "TaskList": "task",
    "CreateWorkItem": "work",
    "PickWorkItem": "work",
    "UpdateWorkItem": "work",
    "CompleteWorkItem": "work",
    "GetWorkItem": "work",
    "ListWorkItems": "work",
    "MemorySearch": "memory",
    "MemoryGet": "memory",
    "Sleep": "lifecycle",
    "Enqueue": "lifecycle",
    "NotifyOperator": "lifecycle",
    "UseWorkspace": "workspace",
    "DetachWorkspace": "workspace",
    "SpawnAgent": "agent",
    "AgentGet": "agent",
}


def test_catalog_lists_exactly_the_builtins():
    assert set(BUILTINS) == set(FAMILIES)
    assert set(FAMILIES) <= set(registry.names())
    assert registry.names() == sorted(registry.names())


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_each_entry_resolves_to_its_tool(name):
    module, _, cls = BUILTINS[name].partition(":")
    assert module.startswith("holon.tools.") and cls
    klass = getattr(importlib.import_module(module), cls)
    assert issubclass(klass, Tool) and issubclass(klass.Args, ToolArgs)
    tool = registry.get(name)
    assert type(tool) is klass and tool.name == name and tool.family == FAMILIES[name]
    assert tool.description.strip()


def test_mutating_tools_are_the_ones_that_change_things():
    mutating = {n for n in BUILTINS if registry.get(n).mutates}
    assert mutating == {
        "ApplyPatch",
        "ExecCommand",
        "ExecCommandBatch",
        "TaskStop",
        "CreateWorkItem",
        "PickWorkItem",
        "UpdateWorkItem",
        "CompleteWorkItem",
        "UseWorkspace",
        "DetachWorkspace",
        "SpawnAgent",
    }


def test_unknown_name_is_none():
    assert registry.get("NoSuchTool") is None
    assert registry.get("holon.tools.exec_command:ExecCommand") is None


def test_reading_the_catalog_imports_no_tool_module():
    code = (
        "import sys; import holon.tools.catalog as c; "
        "print(len(c.BUILTINS), sorted(m for m in sys.modules "
        "if m.startswith('holon.tools.') and m != 'holon.tools.catalog'))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{len(FAMILIES)} []"

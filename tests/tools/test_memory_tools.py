"""MemorySearch and MemoryGet through the tool registry: envelopes, golden receipts, and errors as
the envelope RFC shapes them (never an SQLite message)."""

from __future__ import annotations

import json
import re

import pytest
from helpers import check_golden, subprocess_env

from holon.agent.handle import Agent
from holon.home.init import init_home
from holon.store import jsonl
from holon.tools import registry
from holon.tools.base import ToolContext
from holon.tools.memory import MemoryGet, MemorySearch

T = "2026-05-01T10:00:00.000Z"


@pytest.fixture
def ctx():
    home = init_home(None, "a")
    (home.memory / "self.md").write_text(
        "# Self\n\n## Deploys\nProduction deploys need the OSPREY key.\n"
    )
    for i, text in enumerate(
        [
            "Deployed release 4.2 after the OSPREY key was rotated.",
            "周报：机器学习模型的准确率提高了 3%。",
            "Nothing to report.",
        ]
    ):
        rec = {"id": f"brf_{i}", "kind": "result", "created_at": T, "text": text}
        jsonl.append(home.briefs, {**rec, "workspace_id": "agent_home"})
    return ToolContext(agent=Agent(home), execution_root=home.root, cwd=home.root)


def call(ctx, name, args):
    outcome = registry.call(ctx, name, args)
    assert json.loads(json.dumps(outcome.envelope)) == outcome.envelope
    return outcome.envelope, outcome.rendered


def test_search_envelope_and_receipt(ctx):
    env, rendered = call(ctx, "MemorySearch", {"query": "osprey key"})
    assert env["status"] == "success" and env["summary_text"] == "2 memory results"
    results = env["result"]["results"]
    assert {r["kind"] for r in results} == {"memory_file", "brief"}
    for r in results:
        assert set(r) == {
            "kind",
            "source_ref",
            "scope_kind",
            "workspace_id",
            "agent_id",
            "source_path",
            "title",
            "snippet",
            "score",
            "updated_at",
            "metadata",
        }
    assert "source_ref mem_" in rendered
    check_golden("receipts/memory_search.txt", _mask_time(rendered))


def test_results_with_some_of_the_words_say_so(ctx):
    env, rendered = call(ctx, "MemorySearch", {"query": "osprey key rotated"})
    assert env["result"]["match"] == "any" and env["summary_text"].startswith("2 memory results")
    matched = {r["kind"]: r["matched"] for r in env["result"]["results"]}
    assert matched == {"brief": "all", "memory_file": "some"}
    assert rendered.count("some of the words") == 1


def _mask_time(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "<time>", text)


def test_get_envelope_and_receipt(ctx):
    env, _ = call(ctx, "MemorySearch", {"query": "学习"})
    ref = env["result"]["results"][0]["source_ref"]
    env, rendered = call(ctx, "MemoryGet", {"source_ref": ref, "max_chars": 8})
    assert env["result"]["content"] == "周报：机器学习模"
    assert env["result"]["truncated"] is True and env["result"]["total_chars"] == 20
    check_golden("receipts/memory_get_truncated.txt", _mask_time(rendered))
    env, rendered = call(ctx, "MemoryGet", {"source_ref": ref})
    assert env["result"]["content"] == "周报：机器学习模型的准确率提高了 3%。"
    assert rendered.endswith("\n---\n周报：机器学习模型的准确率提高了 3%。")


@pytest.mark.parametrize(
    "name, args, kind, field",
    [
        ("MemorySearch", {"query": "***"}, "invalid_tool_input", "query"),
        ("MemorySearch", {"query": '" OR NEAR('}, None, None),  # quoted: a search, not an error
        ("MemorySearch", {"query": ""}, "invalid_tool_input", "query"),
        ("MemorySearch", {"query": "x", "limit": 0}, "invalid_tool_input", "limit"),
        ("MemorySearch", {"query": "x", "limit": 51}, "invalid_tool_input", "limit"),
        ("MemorySearch", {"query": "x", "scope": "all"}, "invalid_tool_input", "scope"),
        ("MemoryGet", {"source_ref": "mem_0123"}, "memory_source_not_found", None),
        ("MemoryGet", {"source_ref": "memory/self.md"}, "memory_source_not_found", None),
        ("MemoryGet", {"source_ref": "x", "max_chars": 0}, "invalid_tool_input", "max_chars"),
        ("MemoryGet", {"source_ref": "x", "max_chars": 50_001}, "invalid_tool_input", "max_chars"),
    ],
)
def test_bad_input_is_a_clear_tool_error(ctx, name, args, kind, field):
    env, rendered = call(ctx, name, args)
    if kind is None:
        assert env["status"] == "success"
        return
    assert env["status"] == "error" and env["error"]["kind"] == kind
    assert env["error"]["recovery_hint"]
    receipt = json.loads(rendered)
    assert receipt["ok"] is False and receipt["kind"] == kind and "hint" in receipt
    assert "sqlite" not in rendered.lower() and "fts5" not in rendered.lower()
    if field:
        assert receipt["field"] == field


def test_the_tools_load_sqlite_only_when_they_run():
    import subprocess
    import sys

    code = "import sys, holon.tools.memory; print('sqlite3' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=subprocess_env(),
    )
    assert out.stdout.strip() == "False"
    assert registry.get("MemorySearch").__class__ is MemorySearch
    assert registry.get("MemoryGet").__class__ is MemoryGet

"""`holon memory search|get|rebuild`: human and JSON output, exact text, and clear errors."""

from __future__ import annotations

import json

from cmd_checks import fails, ok, ok_json

from holon.cli.memory import get_cmd, rebuild_cmd, search_cmd
from holon.store import jsonl

T = "2026-05-01T10:00:00.000Z"


def _brief(agent, i: int, text: str) -> None:
    rec = {"id": f"brf_{i}", "kind": "result", "created_at": T, "text": text}
    jsonl.append(agent.briefs, {**rec, "workspace_id": "agent_home"})


def test_search_prints_ref_time_kind_title_and_snippet(agent):
    _brief(agent, 1, "Rotated the PELICAN certificate.\nIt expires in 90 days.")
    out = ok(search_cmd, "a", "pelican").stdout.splitlines()
    ref = out[0].split()[0]
    assert ref.startswith("mem_")
    assert out[0].endswith("[brief] result brief: Rotated the PELICAN certificate.")
    assert "2026-05-01T10:00" in out[0]
    assert out[1] == "    Rotated the PELICAN certificate. It expires in 90 days."


def test_search_json_and_get_round_trip_the_exact_text(agent):
    text = "第一段：机器学习\n\n  indented line kept exactly  \n"
    _brief(agent, 1, text)
    doc = ok_json(search_cmd, "a", "机器", "--json")
    assert doc["match"] == "all" and doc["scope"]["workspace_id"] == "agent_home"
    ref = doc["results"][0]["source_ref"]
    assert ok(get_cmd, "a", ref).stdout == text
    got = ok_json(get_cmd, "a", ref, "--json", "--max-chars", "3")
    assert got["content"] == text[:3] and got["truncated"] is True
    cut = ok(get_cmd, "a", ref, "--max-chars", "3")
    assert cut.stdout == text[:3] + "\n" and "truncated: 3 of" in cut.stderr


def test_no_results_is_not_an_error(agent):
    result = ok(search_cmd, "a", "nothing-like-this")
    assert result.stdout == "" and "no results" in result.stderr


def test_rebuild_one_agent_or_all(agent):
    _brief(agent, 1, "one brief")
    out = ok(rebuild_cmd, "a").stdout
    assert out.startswith("a: ") and "1 brief" in out
    docs = ok_json(rebuild_cmd, "--all", "--json")
    assert [d["agent_id"] for d in docs] == ["a"] and docs[0]["by_kind"]["brief"] == 1
    assert agent.memory_index.exists()


def test_errors_are_clear(agent):
    fails("memory", "search", "a", "***", code=2, kind="invalid_query")
    fails("memory", "search", "a", "x", "--limit", "0", code=2, kind="invalid_query")
    fails("memory", "get", "a", "mem_0000", code=2, kind="memory_source_not_found")
    fails("memory", "get", "a", "../state.json", code=2, kind="memory_source_not_found")
    fails("memory", "get", "a", "x", "--max-chars", "50001", code=2, kind="invalid_query")
    fails("memory", "search", "nobody", "x", code=2, kind="unknown_agent")
    fails("memory", "rebuild", code=2, kind="missing_agent")
    fails("memory", "rebuild", "a", "--all", code=2, kind="usage")


def test_a_corrupt_index_is_rebuilt_by_the_next_search(agent):
    _brief(agent, 1, "the HERON record")
    first = ok_json(search_cmd, "a", "heron", "--json")["results"]
    agent.memory_index.write_bytes(b"not a database" * 100)
    again = ok_json(search_cmd, "a", "heron", "--json")["results"]
    assert json.dumps(again) == json.dumps(first)

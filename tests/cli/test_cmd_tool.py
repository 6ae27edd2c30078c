"""`holon tool list|schema|call`: the catalog, emitted schemas per provider, and calls with their
exit codes (0 success, 1 error envelope, 2 bad usage with nothing run)."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, invoke, ok, ok_json

from holon.cli.tool import tool_group
from holon.tools import registry


def test_list_json_and_text():
    tools = ok_json(tool_group, "list", "--json")
    assert [t["name"] for t in tools] == [t.name for t in registry.all_tools()]
    assert "ExecCommand" in {t["name"] for t in tools}
    for t in tools:
        assert set(t) == {"name", "family", "mutates", "description"} and t["description"]
    lines = ok(tool_group, "list").stdout.splitlines()
    assert len(lines) == len(tools)
    assert all(line.split()[0] == t["name"] for line, t in zip(lines, tools, strict=True))


def test_schema_source_and_provider_forms():
    source = ok_json(tool_group, "schema", "ExecCommand")
    assert source["type"] == "object" and "cmd" in source["properties"]
    openai = ok_json(tool_group, "schema", "ExecCommand", "--provider", "openai")
    assert set(openai) == {"type", "name", "description", "parameters", "strict"}
    assert openai["type"] == "function" and openai["strict"] is False
    anthropic = ok_json(tool_group, "schema", "ExecCommand", "--provider", "anthropic")
    assert set(anthropic) == {"name", "description", "input_schema"}
    assert anthropic["input_schema"] == openai["parameters"]
    strict = ok_json(tool_group, "schema", "ExecCommand", "--strict")
    assert sorted(strict["required"]) == sorted(strict["properties"])
    assert (
        ok_json(tool_group, "schema", "ExecCommand", "--provider", "openai", "--strict")["strict"]
        is True
    )


def test_schema_of_an_unknown_tool():
    _, err = fails("tool", "schema", "NoSuchTool", code=2, kind="unknown_tool")
    assert "ExecCommand" in err.splitlines()[1]


def test_call_success_envelope_and_render(agent):
    result = invoke(
        tool_group, "call", "a", "ExecCommand", "--input", '{"cmd": "echo hi", "login": false}'
    )
    assert result.exit_code == 0
    env = json.loads(result.stdout)
    assert (env["tool_name"], env["status"], env["error"]) == ("ExecCommand", "success", None)
    assert env["result"]["exit_status"] == 0 and env["result"]["stdout_preview"] == "hi\n"
    rendered = ok(
        tool_group,
        "call",
        "a",
        "ExecCommand",
        "--render",
        "--input",
        '{"cmd": "echo there", "login": false}',
    ).stdout
    assert rendered.startswith("command completed: exit 0") and "there" in rendered


def test_call_reads_input_from_file_and_stdin(agent, tmp_path):
    args = tmp_path / "args.json"
    args.write_text('{"cmd": "echo file", "login": false}')
    env = ok_json(tool_group, "call", "a", "ExecCommand", "--input", f"@{args}")
    assert env["result"]["stdout_preview"] == "file\n"
    env = ok_json(
        tool_group,
        "call",
        "a",
        "ExecCommand",
        "--input",
        "-",
        input='{"cmd": "echo stdin", "login": false}',
    )
    assert env["result"]["stdout_preview"] == "stdin\n"


def test_call_error_envelope_exits_1(agent):
    result = invoke(tool_group, "call", "a", "TaskStatus", "--input", '{"task_id": "nope"}')
    assert result.exit_code == 1
    env = json.loads(result.stdout)
    assert env["status"] == "error" and env["error"]["kind"] == "task_not_found"


def test_call_runs_in_the_agent_home(agent):
    ok(tool_group, "call", "a", "ExecCommand", "--input", '{"cmd": "touch made", "login": false}')
    assert (agent.root / "made").is_file()  # so the checks below would see a call that ran


@pytest.mark.parametrize(
    "args, kind",
    [
        (["nobody", "ExecCommand"], "unknown_agent"),
        (["a", "NoSuchTool"], "unknown_tool"),
        (["a", "ExecCommand", "--input", '{"cmd": "touch made"'], "invalid_json"),
        (["a", "ExecCommand", "--input", '["touch made"]'], "invalid_json"),
    ],
)
def test_bad_calls_exit_2_and_run_nothing(agent, args, kind):
    fails("tool", "call", *args, code=2, kind=kind)
    assert not (agent.root / "made").exists()
    assert not any(e["kind"] == "tool_result" for e in _transcript(agent))


def _transcript(agent):
    from holon.store import jsonl

    return list(jsonl.read(agent.transcript))

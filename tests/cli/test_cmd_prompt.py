"""`holon prompt` and `holon run` with the scripted provider: the printed result, the JSON
document, exit codes 0/1/2/3, and prompts refused before anything is queued."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from cmd_checks import fails, invoke, ok, ok_json, usage_error
from scenario_helpers import cli

from holon.cli.prompt import prompt_cmd, run_cmd
from holon.store import jsonl

RESULT_KEYS = {
    "agent_id",
    "message_id",
    "turn_id",
    "status",
    "final_text",
    "token_usage",
    "provider_attempt_timeline",
    "exit_code",
}


def prompts(agent) -> list[str]:
    return [m["body"]["text"] for m in jsonl.read(agent.messages)]


def test_prompt_prints_the_final_text(agent, script):
    model = script({"text": "Hello, operator."})
    assert ok(prompt_cmd, "a", "hi", "--model", model).stdout == "Hello, operator.\n"
    assert prompts(agent) == ["hi"] and agent.queue.depth() == 0


def test_prompt_json_document(agent, script):
    model = script({"text": "Done.", "usage": {"input_tokens": 5, "output_tokens": 2}})
    doc = ok_json(prompt_cmd, "a", "do it", "--model", model, "--json")
    assert RESULT_KEYS <= set(doc)
    assert (doc["status"], doc["final_text"], doc["exit_code"]) == ("completed", "Done.", 0)
    assert doc["token_usage"]["input_tokens"] == 5
    assert doc["provider_attempt_timeline"]["winning_model_ref"] == model


def test_prompt_reads_stdin_and_uses_HOLON_MODEL(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", script({"text": "ok"}))
    assert ok(prompt_cmd, "a", "-", input="from stdin\n").stdout == "ok\n"
    assert prompts(agent) == ["from stdin\n"]


def test_no_wait_only_queues(agent, monkeypatch, script):
    monkeypatch.setenv("HOLON_MODEL", script({"text": "x"}))
    doc = ok_json(prompt_cmd, "a", "later", "--no-wait", "--json", "--priority", "next")
    assert doc == {"agent_id": "a", "message_id": doc["message_id"], "status": "queued"}
    out = ok(prompt_cmd, "a", "again", "--no-wait").stdout
    assert out.startswith("queued msg_") and out.endswith(" for a\n")
    assert agent.queue.depth() == 2


def test_failed_turn_exits_1_with_one_error_line(agent, script):
    model = script({"error": {"status": 400, "message": "bad request"}})
    code, out, err = cli("prompt", "a", "hi", "--model", model)
    assert code == 1 and out == ""
    assert err.splitlines()[0].startswith("holon: turn_failed: ") and "Traceback" not in err
    model = script({"error": {"status": 401}}, name="s2.jsonl")
    result = invoke(prompt_cmd, "a", "again", "--model", model, "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["status"] == "failed" and doc["exit_code"] == 1 and doc["failure_artifact"]


def test_no_model_is_refused_before_queueing(agent):
    _, err = fails("prompt", "a", "hi", code=2, kind="no_model_configured")
    assert "HOLON_MODEL" in err
    assert prompts(agent) == [] and agent.queue.depth() == 0


def test_stopped_agent_exits_3_and_queues_nothing(agent, script):
    from holon.agent import control

    control.stop(agent)
    fails("prompt", "a", "hi", "--model", script({"text": "x"}), code=3, kind="agent_stopped")
    fails("prompt", "a", "hi", "--no-wait", code=3, kind="agent_stopped")
    assert prompts(agent) == [] and agent.queue.depth() == 0


def test_paused_agent_keeps_the_prompt_queued_and_exits_3(agent, script):
    from holon.agent import control

    control.pause(agent)
    code, out, err = cli("prompt", "a", "hi", "--model", script({"text": "x"}))
    assert code == 3 and out == ""
    first, hint = err.splitlines()
    assert first.startswith("holon: agent_not_runnable: agent a is paused; the prompt msg_"), err
    assert hint.startswith("hint: ") and "holon resume a" in hint
    assert prompts(agent) == ["hi"] and agent.queue.depth() == 1


def test_bad_input(agent, script):
    fails("prompt", "nobody", "hi", code=2, kind="unknown_agent")
    usage_error(prompt_cmd, "a", "hi", "--priority", "urgent")
    assert prompts(agent) == []


def test_invalid_utf8_on_stdin_queues_nothing(agent):
    from holon.errors import InvalidInput

    with pytest.raises(InvalidInput) as info:
        invoke(prompt_cmd, "a", "-", "--no-wait", input=b"\xc3\x28")
    assert info.value.kind == "invalid_utf8"
    assert prompts(agent) == [] and agent.queue.depth() == 0


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """`holon run` makes its temporary agent under here, not the system temp dir."""
    base = tmp_path / "tmp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    return base


def test_run_one_shot_uses_a_temporary_private_agent(holon_env, script, private_tmp):
    model = script({"text": "one shot"})
    doc = ok_json(run_cmd, "hello", "--model", model, "--json")
    assert doc["agent_id"] == "run" and doc["final_text"] == "one shot" and "home" not in doc
    assert os.listdir(private_tmp) == []  # removed
    assert not (holon_env / "agents").exists() or os.listdir(holon_env / "agents") == []


def test_run_keep_prints_the_home(holon_env, script, private_tmp):
    doc = ok_json(run_cmd, "hello", "--model", script({"text": "kept"}), "--keep", "--json")
    runs = holon_env / "run"  # out of every other agent's reach (holon.sandbox.confine)
    assert doc["home"].startswith(str(runs)) and os.path.isdir(doc["home"])
    assert (
        ok(run_cmd, "-", "--model", script({"text": "text"}, name="t.jsonl"), input="stdin").stdout
        == "text\n"
    )


def test_run_as_a_named_agent(holon_env, script, private_tmp):
    _, err = fails(
        "run",
        "hi",
        "--agent",
        "ghost",
        "--model",
        script({"text": "x"}),
        code=2,
        kind="unknown_agent",
    )
    assert "--create-agent" in err and not (holon_env / "agents" / "ghost").exists()
    model = script({"text": "created"}, name="c.jsonl")
    doc = ok_json(run_cmd, "hi", "--agent", "ghost", "--create-agent", "--model", model, "--json")
    assert doc["agent_id"] == "ghost" and doc["final_text"] == "created"
    assert (holon_env / "agents" / "ghost" / "AGENTS.md").is_file()


def test_run_without_a_model(holon_env, private_tmp):
    fails("run", "hi", code=2, kind="no_model_configured")
    assert os.listdir(private_tmp) == []

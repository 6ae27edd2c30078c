"""Turns through the real CLI: prompt in, brief out;
failures; provenance; lifecycle refusals; locks."""

from __future__ import annotations

import json
import subprocess
import time

from helpers import REPO, holon_cmd, run, subprocess_env


def test_prompt_runs_a_turn_with_a_tool_error_and_a_brief(agent, script):
    model = script(
        {
            "text": "Checking.",
            "tool_calls": [{"name": "NoSuchTool", "arguments": {}}],
            "usage": {"input_tokens": 10, "output_tokens": 2},
        },
        {"text": "All done.", "usage": {"input_tokens": 20, "output_tokens": 3}},
    )
    r = run("prompt", "a", "hello", "--json", "--model", model)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "completed" and doc["final_text"] == "All done."
    assert doc["token_usage"]["input_tokens"] == 30 and doc["token_usage"]["output_tokens"] == 5
    assert doc["provider_attempt_timeline"]["attempts"][0]["outcome"] == "succeeded"
    entries = [json.loads(x) for x in run("transcript", "a", "--jsonl").stdout.splitlines()]
    kinds = [e["kind"] for e in entries]
    assert kinds == [
        "message",
        "turn_context",
        "assistant_round",
        "tool_call",
        "tool_result",
        "assistant_round",
        "brief",
        "turn_terminal",
    ]
    result = entries[4]["data"]
    assert result["envelope"]["error"]["kind"] == "unknown_tool"
    assert json.loads(result["rendered"])["ok"] is False
    assert entries[2]["data"]["input_tokens"] == 10
    assert entries[2]["data"]["token_usage"]["output_tokens"] == 2
    briefs = [json.loads(x) for x in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert [(b["kind"], b["text"]) for b in briefs] == [("result", "All done.")]
    events = [json.loads(x) for x in run("events", "a", "--jsonl").stdout.splitlines()]
    assert [e["event_seq"] for e in events] == list(range(1, len(events) + 1))
    tool_event = next(e for e in events if e["kind"] == "tool_executed")
    assert tool_event["data"]["tool_error"]["kind"] == "unknown_tool"
    status = json.loads(run("status", "a", "--json").stdout)
    assert status["token_usage"]["total"]["total_tokens"] == 35
    assert status["token_usage"]["total_model_rounds"] == 2
    assert status["closure"]["outcome"] == "completed"


def test_invalid_arguments_come_back_as_tool_error(agent, script):
    model = script(
        {"tool_calls": [{"name": "AppendLine", "arguments": {"nope": 1}}]}, {"text": "ok"}
    )
    env = subprocess_env(
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine",
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
    )
    r = run("prompt", "a", "x", "--model", model, env=env)
    assert r.returncode == 0, r.stderr
    res = [
        json.loads(x)
        for x in run("transcript", "a", "--jsonl", env=env).stdout.splitlines()
        if '"tool_result"' in x
    ][0]["data"]["envelope"]
    assert res["status"] == "error" and res["error"]["kind"] == "invalid_tool_input"
    assert res["error"]["recovery_hint"] and res["result"] is None


def test_truncated_mutation_call_is_not_run(agent, script, tmp_path):
    fx = tmp_path / "fx"
    model = script(
        {
            "tool_calls": [{"name": "AppendLine", "arguments": {"line": "cut"}}],
            "stop_reason": "max_output_tokens",
        },
        {"text": "ok"},
    )
    env = subprocess_env(
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine",
        SIDEFX_FILE=str(fx),
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
    )
    assert run("prompt", "a", "x", "--model", model, env=env).returncode == 0
    assert not fx.exists()
    line = next(
        x
        for x in run("transcript", "a", "--jsonl", env=env).stdout.splitlines()
        if '"tool_result"' in x
    )
    assert json.loads(line)["data"]["envelope"]["error"]["kind"] == "truncated_mutation_tool_call"


def test_failed_turn_prints_json_and_exits_1(agent, script):
    too_long = {"error": {"status": 400, "kind": "context_length_exceeded", "message": "too long"}}
    model = script(too_long, too_long)
    r = run("prompt", "a", "x", "--json", "--model", model)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "failed"
    assert "context length was exceeded" in doc["failure_artifact"]["summary"]
    assert "after compacting once" in doc["failure_artifact"]["summary"]
    timeline = doc["provider_attempt_timeline"]
    assert len(timeline["attempts"]) == 2  # the overflow, then one retry after compaction
    assert timeline["context_recovery"]["reason"] == "context_length_exceeded"
    briefs = [json.loads(x) for x in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert briefs[-1]["kind"] == "failure" and briefs[-1]["text"]
    kinds = [json.loads(x)["kind"] for x in run("transcript", "a", "--jsonl").stdout.splitlines()]
    assert "runtime_failure" in kinds
    events = [json.loads(x) for x in run("events", "a", "--jsonl").stdout.splitlines()]
    err = next(e for e in events if e["kind"] == "runtime_error")
    assert (
        err["data"]["provider_attempt_timeline"]["attempts"][0]["failure_kind"]
        == "context_length_exceeded"
    )


def test_retry_then_success_records_every_attempt(agent, script):
    model = script({"error": {"status": 429}}, {"error": {"status": 503}}, {"text": "third time"})
    doc = json.loads(run("prompt", "a", "x", "--json", "--model", model).stdout)
    outcomes = [a["outcome"] for a in doc["provider_attempt_timeline"]["attempts"]]
    assert outcomes == ["retrying", "retrying", "succeeded"]
    assert doc["final_text"] == "third time"


def test_exhausted_script_fails_clearly(agent, script):
    model = script({"text": "only one"})
    assert run("prompt", "a", "1", "--model", model).returncode == 0
    r = run("prompt", "a", "2", "--model", model)
    assert r.returncode == 1 and "no round left" in r.stderr


def test_max_rounds_guard(agent, script, tmp_path):
    rounds = [{"tool_calls": [{"name": "NoSuchTool", "arguments": {}}]}] * 5
    model = script(*rounds)
    r = run(
        "prompt", "a", "x", "--json", "--model", model, env=subprocess_env(HOLON_MAX_ROUNDS="3")
    )
    assert r.returncode == 1
    assert "round limit" in json.loads(r.stdout)["failure_artifact"]["summary"]


def test_enqueue_derives_provenance(agent):
    cases = {
        "channel_event": ("channel", "untrusted_external", "external_evidence"),
        "webhook_event": ("webhook", "trusted_integration", "integration_signal"),
        "timer_tick": ("timer", "trusted_system", "runtime_instruction"),
        "system_tick": ("system", "trusted_system", "runtime_instruction"),
    }
    for kind, (origin, trust, authority) in cases.items():
        r = run("enqueue", "a", "--kind", kind, "--source", "src", "--text", "hi", "--json")
        assert r.returncode == 0, r.stderr
        env = json.loads(r.stdout)
        assert (env["origin"]["kind"], env["trust"], env["authority_class"]) == (
            origin,
            trust,
            authority,
        )
        assert env["admission_context"] == "local_process"
    r = run("enqueue", "a", "--kind", "channel_event", "--text", "x", "--trust", "trusted_operator")
    assert r.returncode == 2  # there is no way to pass trust


def test_prompt_provenance_is_operator(agent, script):
    r = run("prompt", "a", "hi", "--no-wait", "--model", script({"text": "x"}))
    assert r.returncode == 0
    env = json.loads((next((agent.root / ".holon/queue/new").iterdir())).read_text())
    assert (
        env["origin"]["kind"],
        env["trust"],
        env["authority_class"],
        env["delivery_surface"],
        env["admission_context"],
    ) == ("operator", "trusted_operator", "operator_instruction", "cli_prompt", "local_process")


def test_stopped_agent_refuses_then_resumes(agent, script):
    assert run("stop", "a").returncode == 0
    r = run("prompt", "a", "hello", "--model", script({"text": "hi"}))
    assert r.returncode == 3 and "holon resume a" in r.stderr
    r = run("enqueue", "a", "--kind", "webhook_event", "--text", "x")
    assert r.returncode == 3
    assert run("wake", "a").returncode == 3
    status = json.loads(run("status", "a", "--json").stdout)
    assert "resume" in status["lifecycle_hint"]
    assert not list((agent.root / ".holon/queue/new").iterdir())
    assert run("resume", "a").returncode == 0
    assert (
        run("prompt", "a", "hello", "--model", script({"text": "back"}, name="s2.jsonl")).stdout
        == "back\n"
    )


def test_paused_agent_queues_but_does_not_run(agent, script):
    assert run("pause", "a").returncode == 0
    r = run("prompt", "a", "hello", "--model", script({"text": "later"}))
    assert r.returncode == 3 and "resume" in r.stderr
    assert len(list((agent.root / ".holon/queue/new").iterdir())) == 1
    assert run("resume", "a").returncode == 0
    r = run("tick", "a", "--json", "--model", script({"text": "later"}, name="s2.jsonl"))
    assert r.returncode == 0
    assert json.loads(r.stdout)["agents"][0]["turns"][0]["final_text"] == "later"


def test_second_tick_exits_at_once_while_first_holds_the_lock(agent, script, tmp_path):
    fx, release = tmp_path / "fx", tmp_path / "release"
    slow = {"line": "slow", "sleep_ms": 60000, "until_file": str(release)}
    model = script({"tool_calls": [{"name": "AppendLine", "arguments": slow}]}, {"text": "done"})
    env = subprocess_env(
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine",
        SIDEFX_FILE=str(fx),
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
        HOLON_MODEL=model,
    )
    assert run("prompt", "a", "x", "--no-wait", env=env).returncode == 0
    first = subprocess.Popen([*holon_cmd(), "tick", "a"], env=env)
    deadline = time.time() + 10
    while not fx.exists() and time.time() < deadline:
        time.sleep(0.02)
    second = run("tick", "a", "--json", env=env)
    assert first.poll() is None  # the first still holds the lock: the second did not wait for it
    assert second.returncode == 0
    assert json.loads(second.stdout)["agents"][0]["outcome"] == "busy"
    release.touch()
    assert first.wait(timeout=20) == 0


def test_idle_tick_all_with_no_agents_succeeds():
    r = run("tick", "--all", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"agents": []}


def test_run_uses_a_temporary_private_agent(script):
    r = run("run", "hello", "--json", "--model", script({"text": "one shot"}))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["final_text"] == "one shot" and doc["status"] == "completed"
    assert json.loads(run("agents", "--json").stdout) == []


def test_run_with_agent_and_create(script):
    r = run("run", "hi", "--agent", "newbie", "--model", script({"text": "x"}))
    assert r.returncode == 2 and "--create-agent" in r.stderr
    r = run("run", "hi", "--agent", "newbie", "--create-agent", "--model", script({"text": "made"}))
    assert r.returncode == 0 and r.stdout == "made\n"
    assert [a["agent_id"] for a in json.loads(run("agents", "--json").stdout)] == ["newbie"]


def test_transcript_tail_and_follow_flags(agent, script):
    model = script(*[{"text": f"answer {i}"} for i in range(5)])
    for i in range(5):
        run("prompt", "a", f"q{i}", "--model", model)
    tail = [
        json.loads(x) for x in run("transcript", "a", "--jsonl", "--tail", "2").stdout.splitlines()
    ]
    assert [e["kind"] for e in tail] == ["brief", "turn_terminal"]
    assert tail[0]["data"]["brief"]["text"] == "answer 4"
    since = [
        json.loads(x) for x in run("events", "a", "--jsonl", "--since-seq", "5").stdout.splitlines()
    ]
    assert since[0]["event_seq"] == 6

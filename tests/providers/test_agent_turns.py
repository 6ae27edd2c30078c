"""Full agent turns through `holon prompt` against each transport's loopback server, real SDKs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import run, subprocess_env
from provider_kits import KITS, SECRET


@pytest.mark.parametrize("kit", KITS, ids=lambda k: k.transport)
def test_prompt_runs_tool_calls_through_the_transport(kit, server, monkeypatch):
    home = Path(os.environ["HOLON_HOME"])
    assert run("init", "--agent-id", "a").returncode == 0
    kit.setup(server, monkeypatch)
    kit.push_ok(server, kit.tool_round())
    kit.push_ok(server, kit.text_round())
    r = run(
        "prompt", "a", "list and patch", "--json", "--model", kit.ref("m-1"), env=subprocess_env()
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["final_text"] == "Done." and doc["status"] == "completed"
    assert doc["provider_attempt_timeline"]["winning_model_ref"] == kit.ref("m-1")
    assert len(server.requests) == 2
    second = json.dumps(server.requests[1].json)
    assert "exec_1" in second and "patch_1" in second  # both results went back with their call ids
    assert "AGENTS.md" in second  # ExecCommand really ran `ls` in the agent home
    results = [
        json.loads(x)["data"]
        for x in run("transcript", "a", "--jsonl").stdout.splitlines()
        if '"tool_result"' in x
    ]
    assert [res["tool_name"] for res in results] == ["ExecCommand", "ApplyPatch"]
    assert (
        results[0]["status"] == "success" and results[1]["status"] == "error"
    )  # not a unified diff
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


@pytest.mark.parametrize("kit", KITS, ids=lambda k: k.transport)
def test_context_overflow_compacts_once_then_fails_the_turn(kit, server, monkeypatch):
    assert run("init", "--agent-id", "a").returncode == 0
    kit.setup(server, monkeypatch)
    kit.push_context_overflow(server)
    kit.push_context_overflow(server)
    env = subprocess_env(HOLON_FALLBACK_MODELS=kit.ref("m-2"))
    r = run("prompt", "a", "huge", "--json", "--model", kit.ref("m-1"), env=env)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert "context length was exceeded" in doc["failure_artifact"]["summary"]
    # one retry after compacting, never a fallback model (a smaller window is not a cure)
    assert len(server.requests) == 2
    assert all(r_.json.get("model") != "m-2" for r_ in server.requests)
    briefs = [json.loads(x) for x in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert briefs[-1]["kind"] == "failure" and briefs[-1]["text"]


def test_provider_doctor_reports_presence_never_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    r = run("provider", "doctor", "--json", env=subprocess_env())
    assert r.returncode == 0 and SECRET not in r.stdout
    doc = json.loads(r.stdout)
    openai = next(p for p in doc["providers"] if p["id"] == "openai")
    assert openai["credentials_present"] is True
    assert (
        next(p for p in doc["providers"] if p["id"] == "anthropic")["credentials_present"] is False
    )
    assert doc["retry_policy"]["max_retries"] == 2
    human = run("provider", "doctor", env=subprocess_env())
    assert (
        human.returncode == 0
        and "OPENAI_API_KEY: present" in human.stdout
        and SECRET not in human.stdout
    )

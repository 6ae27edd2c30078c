"""Spec (Provider Transport Contract: a context-length error is not a transport failure to fail
over; issue 32): on a context-length overflow holon compacts and retries once on the same model,
never on a fallback model, and the failure names the overflow."""

from __future__ import annotations

import json

from helpers import run, subprocess_env

OVERFLOW = {"error": {"status": 400, "kind": "context_length_exceeded", "message": "too long"}}


def test_overflow_retries_once_on_the_same_model_never_the_fallback(agent, script):
    primary = script(OVERFLOW, {"error": {"status": 400, "message": "bad request"}})
    fallback = script({"text": "answered by the fallback"}, name="fallback.jsonl")
    env = subprocess_env(HOLON_FALLBACK_MODELS=fallback)
    r = run("prompt", "a", "x", "--json", "--model", primary, env=env)
    assert r.returncode == 1, r.stdout
    doc = json.loads(r.stdout)
    assert doc["status"] == "failed" and doc["final_text"] != "answered by the fallback"
    attempts = doc["provider_attempt_timeline"]["attempts"]
    assert [a["model_ref"] for a in attempts] == [primary, primary]
    assert [a["failure_kind"] for a in attempts] == ["context_length_exceeded", "client_error"]
    summary = doc["failure_artifact"]["summary"]
    assert "overflowed the context window" in summary and "no fallback on overflow" in summary


def test_overflow_twice_names_the_overflow(agent, script):
    primary = script(OVERFLOW, OVERFLOW)
    fallback = script({"text": "answered by the fallback"}, name="fallback.jsonl")
    env = subprocess_env(HOLON_FALLBACK_MODELS=fallback)
    doc = json.loads(run("prompt", "a", "x", "--json", "--model", primary, env=env).stdout)
    assert doc["failure_artifact"]["kind"] == "context_length_exceeded"
    assert "after compacting once" in doc["failure_artifact"]["summary"]
    refs = [a["model_ref"] for a in doc["provider_attempt_timeline"]["attempts"]]
    assert refs == [primary, primary]

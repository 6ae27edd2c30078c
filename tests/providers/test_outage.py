"""A provider that is down, through the real `holon` entry point and the real OpenAI SDK against a
loopback server: connection refused, then 503, then 429 with retry-after. The queued prompt survives
every tick (deferred, never dead-lettered, its transcript and tool call not repeated) and runs
exactly once when the provider is back. A 401 dead-letters at once."""

from __future__ import annotations

import json
import os
import socket

import pytest
from helpers import run
from provider_kits import SECRET, ResponsesKit, _response

from holon.home.registry import resolve
from holon.store import jsonl

T0 = 1_800_000_000.0
KIT = ResponsesKit()
MODEL = "openai/m-1"


def _closed_port_url() -> str:
    """A loopback address where nothing listens: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _unavailable(server, status: int, headers: dict[str, str] | None = None) -> None:
    server.json(KIT.error_body(500, "upstream unavailable"), status, headers)


def _tool_round(fx) -> dict:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_write_1",
        "name": "ExecCommand",
        "arguments": json.dumps({"cmd": f"echo once >> {fx}", "login": False}),
        "status": "completed",
    }
    return _response("resp_1", [call])


def _not_before(home) -> float:
    ((_name, at),) = home.queue.deferred(now=0)
    return at


def _tick(monkeypatch, at: float) -> dict:
    monkeypatch.setenv("HOLON_NOW", str(at))
    r = run("tick", "a", "--json")
    assert r.returncode == 0, r.stderr
    (report,) = json.loads(r.stdout)["agents"]
    return report


@pytest.fixture
def agent_a(server, monkeypatch):
    assert run("init", "--agent-id", "a").returncode == 0
    KIT.setup(server, monkeypatch)
    monkeypatch.setenv("HOLON_RETRY_BASE_S", "10")
    monkeypatch.setenv("HOLON_NOW", str(T0))
    return resolve("a")


def test_a_prompt_outlives_an_outage_and_runs_once_when_the_provider_is_back(
    agent_a, server, monkeypatch, tmp_path
):
    home, fx = agent_a, tmp_path / "fx"
    server.json(_tool_round(fx))  # the turn starts and runs its tool call ...
    for _ in range(3):  # ... then every in-turn attempt of the next round gets a 503
        _unavailable(server, 503)
    r = run("prompt", "a", "write it", "--model", MODEL)
    assert r.returncode == 1 and r.stdout == ""
    err = r.stderr.splitlines()
    assert err[0].startswith("holon: turn_deferred: provider request failed after 3 attempt(s)")
    assert err[1].startswith("hint: the prompt stays queued and runs again after 2027-01-15T08:00")
    assert len(server.requests) == 4 and fx.read_text() == "once\n"
    (queued,) = [json.loads(p.read_text()) for p in home.queue.new.iterdir()]
    assert (queued["model_ref"], queued["provider_retries"]) == (MODEL, 1)

    assert _tick(monkeypatch, T0)["outcome"] == "idle"  # not yet: nothing is sent
    monkeypatch.setenv("OPENAI_BASE_URL", _closed_port_url())  # the server is gone
    report = _tick(monkeypatch, _not_before(home))  # no --model: the message carries it
    assert [t["status"] for t in report["turns"]] == ["deferred"]
    assert report["deferred"][0]["failure_kind"] == "connection"

    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")  # back, but overloaded
    _unavailable(server, 503)
    _unavailable(server, 503)
    _unavailable(server, 429, {"retry-after": "120"})
    due = _not_before(home)
    report = _tick(monkeypatch, due)
    assert report["deferred"][0]["failure_kind"] == "rate_limited"
    assert _not_before(home) == pytest.approx(due + 120, abs=0.01)  # as the provider asked
    assert _tick(monkeypatch, due + 119)["outcome"] == "idle"
    assert len(server.requests) == 7

    KIT.push_ok(server, KIT.text_round())
    report = _tick(monkeypatch, due + 120)
    assert [(t["status"], t["final_text"]) for t in report["turns"]] == [("completed", "Done.")]
    assert len(server.requests) == 8 and fx.read_text() == "once\n"
    last = json.dumps(server.requests[-1].json)
    assert "call_write_1" in last  # the resumed round carries the earlier tool result
    messages = [e for e in jsonl.read(home.transcript) if e["kind"] == "message"]
    assert len(messages) == 1
    assert [b["kind"] for b in jsonl.read(home.briefs)] == ["result"]
    assert home.queue.depth() == 0 and home.queue.dead_letters() == []
    deferrals = [e["data"] for e in jsonl.read(home.events) if e["kind"] == "message_deferred"]
    assert [d["failure_kind"] for d in deferrals] == ["server_error", "connection", "rate_limited"]
    assert _tick(monkeypatch, due + 4000)["outcome"] == "idle"


def test_a_401_dead_letters_at_once_with_a_clear_brief(agent_a, server, monkeypatch):
    home = agent_a
    server.json(KIT.error_body(401, "Incorrect API key provided"), 401)
    r = run("prompt", "a", "hello", "--model", MODEL)
    assert r.returncode == 1 and len(server.requests) == 1  # not retried, not deferred
    err = r.stderr.splitlines()
    assert err[0].startswith("holon: turn_failed: provider request failed after 1 attempt(s): auth")
    assert err[1].startswith("hint: This is not retried: the provider refused the credentials")
    assert "holon provider doctor" in err[1] and "mv " in err[1]
    (name,) = home.queue.dead_letters()
    assert home.queue.depth() == 0
    (brief,) = jsonl.read(home.briefs)
    assert brief["kind"] == "failure" and f"queue/dead/{name}" in brief["text"]
    assert "Incorrect API key" in brief["text"] and SECRET not in brief["text"]
    assert _tick(monkeypatch, T0 + 3600)["outcome"] == "idle"  # nothing is retried
    for path in home.root.rglob("*"):
        if path.is_file() and os.access(path, os.R_OK):
            assert SECRET not in path.read_text(errors="replace"), path

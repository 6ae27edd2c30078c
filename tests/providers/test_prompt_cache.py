"""Prompt caching over the real transports against the loopback server.

Between compactions a request extends the previous one byte for byte: Responses keeps
instructions, tools and prompt_cache_key, and the earlier input is a prefix of the later one;
Anthropic keeps system and tools, earlier messages are a prefix (the rolling cache_control mark
moves to the newest block), and its marks sit on the last system block, the episode block and the
newest block, never more than four. Opt-in `incremental_responses` sends a round that only
appends as previous_response_id plus the new items, and falls back to the full request whenever
the prefix changed or the continuation is rejected.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from provider_kits import (
    EXEC_20K,
    AnthropicKit,
    Driver,
    ResponsesKit,
    exec_then_final,
    share_tls_context,
)

from holon import config
from holon.store import jsonl

TRANSPORTS = [ResponsesKit(), AnthropicKit()]


def _driver(kit: Any, agent: Any, server: Any, monkeypatch: Any, window: int) -> Driver:
    kit.setup(server, monkeypatch)
    share_tls_context(monkeypatch)
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", str(window))
    d = Driver(agent, server, kit)
    d.plan = exec_then_final("echo cached")
    return d


def _marks(body: dict[str, Any]) -> tuple[list[int], list[tuple[int, int]]]:
    system = [i for i, b in enumerate(body["system"]) if "cache_control" in b]
    messages = [
        (mi, bi)
        for mi, m in enumerate(body["messages"])
        for bi, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    return system, messages


# -- the stable prefix ---------------------------------------------------------------------------


@pytest.mark.parametrize("kit", TRANSPORTS, ids=lambda k: k.transport)
def test_the_prefix_is_byte_identical_across_rounds_and_turns(kit, agent, server, monkeypatch):
    d = _driver(kit, agent, server, monkeypatch, 200_000)
    assert d.run_turn("first: run it")["status"] == "completed"
    assert d.run_turn("second: run it again")["status"] == "completed"
    assert not d.events("context_compacted")
    bodies = [r.json for r in server.requests]
    assert len(bodies) == 4  # two rounds a turn
    # round 0 -> round 1 of turn 1, turn 1's last round -> turn 2's first, then inside turn 2
    for a, b in ((0, 1), (1, 2), (2, 3)):
        assert d.wire.prefix_problem(bodies[a], bodies[b]) is None, (a, b)
    if d.wire.openai:
        keys = {"instructions", "tools", "prompt_cache_key"}
        assert keys <= bodies[0].keys()
        assert all(b[k] == bodies[0][k] for b in bodies for k in keys)
        return
    for body in bodies:
        system, messages = _marks(body)
        assert system == [len(body["system"]) - 1]  # the last stable system block
        last = (len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)
        assert messages == [last]  # exactly one rolling mark, on the newest block
        assert len(system) + len(messages) <= 4


def test_anthropic_marks_the_episode_block_after_a_compaction(agent, server, monkeypatch):
    d = _driver(AnthropicKit(), agent, server, monkeypatch, 48_000)
    d.plan = exec_then_final(EXEC_20K)
    for i in range(12):
        d.run_turn(f"turn {i}: print 20 KB", keep=False)
        if d.events("context_compacted"):
            break
    assert d.events("context_compacted"), "no compaction in 12 turns of 20 KB"
    d.plan = exec_then_final("echo small")
    server.requests.clear()
    d.run_turn("after the compaction")
    for rec in server.requests:
        body = rec.json
        lead = body["messages"][0]["content"][0]
        assert lead["text"].startswith("# Earlier context")
        system, messages = _marks(body)
        last = (len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)
        assert system == [len(body["system"]) - 1]
        assert messages == [(0, 0), last]  # the episode block, then the rolling mark
        assert len(system) + len(messages) <= 4


# -- previous_response_id (opt-in) ---------------------------------------------------------------


def _opt_in(how: str, monkeypatch: Any) -> None:
    if how == "env":
        monkeypatch.setenv("HOLON_OPENAI_INCREMENTAL", "1")
        return
    home = Path(os.environ["HOLON_HOME"])
    (home / "config.toml").write_text("[providers.openai]\nincremental_responses = true\n")
    config.reset()


def _reply_by_input(d: Driver, rec: Any) -> tuple[int, Any]:
    """Final text once the newest input item is a tool result, else an ExecCommand call (reads
    the request, so a retried round is answered the same way)."""
    if rec.json["input"][-1]["type"] == "function_call_output":
        return d.wire.final(d.count, f"done {d.turn}", rec.size)
    return d.wire.exec_call(d.count, "echo incremental", rec.size)


@pytest.mark.parametrize("how", ["env", "config"])
def test_incremental_rounds_continue_the_previous_response(how, agent, server, monkeypatch):
    d = _driver(ResponsesKit(), agent, server, monkeypatch, 200_000)
    _opt_in(how, monkeypatch)
    d.plan = _reply_by_input
    d.run_turn("first")
    d.run_turn("second")
    r0, r1, r2, r3 = (r.json for r in server.requests)
    assert "previous_response_id" not in r0  # nothing to continue yet
    # round 1: the first response plus only what is new, the tool result
    assert r1["previous_response_id"] == "resp_1"
    assert [(i["type"], i.get("call_id")) for i in r1["input"]] == [
        ("function_call_output", "call_1")
    ]
    assert "echo incremental" not in json.dumps(r1["input"])  # the call itself is not repeated
    head = {k: v for k, v in r0.items() if k != "input"}
    assert {k: v for k, v in r1.items() if k not in ("input", "previous_response_id")} == head
    # the next turn (no compaction) only appends too: its message and turn context
    assert r2["previous_response_id"] == "resp_2"
    assert [i["role"] for i in r2["input"]] == ["user", "user"]
    assert "second" in r2["input"][0]["content"][0]["text"]
    assert r3["previous_response_id"] == "resp_3"
    assert agent.provider_continuation.exists()


def test_incremental_sends_in_full_after_a_compaction_or_a_changed_prefix(
    agent, server, monkeypatch
):
    from holon.agent.handle import Agent

    d = _driver(ResponsesKit(), agent, server, monkeypatch, 48_000)
    _opt_in("env", monkeypatch)
    d.plan = exec_then_final(EXEC_20K)
    seen: list[tuple[int, int, int, dict[str, Any]]] = []  # (turn, round, epoch, body head)

    def observe(d: Driver, rec: Any) -> None:
        epoch = Agent(d.home).state().context.compression_epoch
        first = rec.json["input"][0].get("content", [{}])[0].get("text", "")
        head = {
            "previous_response_id": rec.json.get("previous_response_id"),
            "episode_first": first.startswith("# Earlier context"),
            "items": len(rec.json["input"]),
        }
        seen.append((d.turn, d.round, epoch, head))

    d.observe = observe
    for i in range(12):
        # every third message is long itself: some compactions come before a turn's first round
        pad = "\n" + "context line for the operator's request\n" * 750 if i % 3 == 2 else ""
        d.run_turn(f"turn {i}: print 20 KB{pad}", keep=False)
    epochs = [e for _, _, e, _ in seen]
    assert epochs[-1] >= 2, f"too few compactions: {epochs}"
    at_round = {r for (_, r, e, _), prev in zip(seen[1:], epochs, strict=False) if e > prev}
    assert at_round == {0, 1}, at_round  # compactions before a turn's first and second rounds
    for k, (turn, rnd, epoch, head) in enumerate(seen):
        where = f"turn {turn} round {rnd}"
        if k == 0 or epoch > epochs[k - 1]:  # nothing to continue, or the prefix was compacted
            assert head["previous_response_id"] is None, where
            assert head["episode_first"] or k == 0, where
        else:  # an append-only request: the previous response plus the new items
            assert head["previous_response_id"] == f"resp_{k}", where
            assert head["items"] <= 2, where

    # an edited memory file keeps the prefix: the edit shows in the new turn's context, and the
    # request still continues the previous response (holon.context.memoryfiles)
    d.observe = None
    (agent.memory / "self.md").write_text("# Self\n\nI keep answers short.\n")
    server.requests.clear()
    d.plan = exec_then_final("echo small")
    d.run_turn("after a memory change")
    changed = server.requests[0].json
    assert changed.get("previous_response_id") == f"resp_{d.count - 2}"
    assert "I keep answers short." not in changed["instructions"]
    assert "I keep answers short." in json.dumps(changed["input"])
    assert server.requests[1].json["previous_response_id"] == f"resp_{d.count - 1}"


def test_a_rejected_continuation_is_retried_in_full(agent, server, monkeypatch):
    d = _driver(ResponsesKit(), agent, server, monkeypatch, 200_000)
    _opt_in("env", monkeypatch)
    rejected: list[str] = []

    def plan(d: Driver, rec: Any) -> tuple[int, Any]:
        prev = rec.json.get("previous_response_id")
        if prev and not rejected:
            rejected.append(prev)
            return 400, {
                "error": {
                    "message": f"Previous response with id '{prev}' not found.",
                    "type": "invalid_request_error",
                    "param": "previous_response_id",
                    "code": "previous_response_not_found",
                }
            }
        return _reply_by_input(d, rec)

    d.plan = plan
    turn = d.run_turn("first")
    assert turn["status"] == "completed", turn
    r0, r1, r1_full = (r.json for r in server.requests)
    assert r1["previous_response_id"] == "resp_1" and rejected == ["resp_1"]
    # the same round again, in full: the first request, the call, its result
    assert "previous_response_id" not in r1_full
    assert r1_full["input"][: len(r0["input"])] == r0["input"]
    assert [i["type"] for i in r1_full["input"][len(r0["input"]) :]] == [
        "function_call",
        "function_call_output",
    ]
    assert r1_full["input"][-1] == r1["input"][-1]
    rounds = [e["data"] for e in jsonl.read(agent.transcript) if e["kind"] == "assistant_round"]
    assert [r["text"] for r in rounds] == ["", "done 1"]
    # and the continuation works again from the full request's response
    server.requests.clear()
    d.run_turn("second")
    assert server.requests[0].json["previous_response_id"] == "resp_3"


def test_without_the_opt_in_previous_response_id_is_never_sent(agent, server, monkeypatch):
    d = _driver(ResponsesKit(), agent, server, monkeypatch, 200_000)
    for i in range(3):
        assert d.run_turn(f"turn {i}")["status"] == "completed"
    assert len(server.requests) == 6
    assert all("previous_response_id" not in r.json for r in server.requests)
    assert not agent.provider_continuation.exists()


@pytest.mark.parametrize("garbage", ["{", "[1, 2]", "fifo"])
def test_an_unreadable_continuation_sends_the_full_request(garbage, agent, server, monkeypatch):
    d = _driver(ResponsesKit(), agent, server, monkeypatch, 200_000)
    _opt_in("env", monkeypatch)
    d.plan = _reply_by_input
    d.run_turn("first")
    saved = agent.provider_continuation
    saved.unlink()
    if garbage == "fifo":
        os.mkfifo(saved)  # never opened for reading: it would block the turn
    else:
        saved.write_text(garbage)
    server.requests.clear()
    turn = d.run_turn("second")
    assert turn["status"] == "completed", turn
    assert "previous_response_id" not in server.requests[0].json
    assert server.requests[1].json["previous_response_id"]  # rewritten after the full request

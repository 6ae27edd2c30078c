"""How many fsyncs a turn makes: its records are group-committed (holon.store.groupcommit), so a
one-round turn makes at most half of the 19 it made with an fsync per record, and each extra tool
call adds at most one (its intent's, which also makes the call before it durable). Counts, not
times; pinned so that a new fsync per record is a decision, not a drift."""

from __future__ import annotations

import json
import os
from collections import Counter

from holon.agent.admission import admit, text_body
from holon.runtime.tick import tick

ONE_ROUND_MAX = 9  # 19 before group commit
PER_CALL_MAX = 1  # 2 before


def _fsyncs(monkeypatch, fn) -> Counter:
    """os.fsync calls while `fn` runs, by the file synced (its name)."""
    seen: Counter = Counter()
    real = os.fsync

    def fsync(fd: int) -> None:
        seen[os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))] += 1
        real(fd)

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", fsync)
        fn()
    return seen


def _turn(agent, tmp_path, monkeypatch, calls: int) -> Counter:
    """fsyncs of the agent's second turn: `calls` TaskList calls in one round, then the answer."""
    script = tmp_path / f"s{calls}.jsonl"
    lines = []
    for turn in range(2):
        if calls:
            batch = [
                {"name": "TaskList", "arguments": {}, "id": f"c{turn}_{k}"} for k in range(calls)
            ]
            lines.append({"text": "", "tool_calls": batch})
        lines.append({"text": f"done {turn}"})
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = f"scripted/{script}"
    reports = []
    for text in ("warm", "counted"):
        admit(agent, "cli_prompt", "operator_prompt", text_body(text))
        seen = _fsyncs(monkeypatch, lambda: reports.append(tick(agent, model=model)))
        assert reports[-1].turns[0]["status"] == "completed", reports[-1].turns
    return seen


def test_a_one_round_turn_makes_at_most_half_the_fsyncs(agent, tmp_path, monkeypatch):
    seen = _turn(agent, tmp_path, monkeypatch, 0)
    assert sum(seen.values()) <= ONE_ROUND_MAX, seen
    for ledger in ("transcript.jsonl", "events.jsonl", "briefs.jsonl"):
        assert seen[ledger] == 1, seen  # one fsync per ledger for the whole turn


def test_each_extra_tool_call_adds_at_most_one_fsync(tmp_path, monkeypatch):
    from holon.home.init import init_home

    two = sum(_turn(init_home(None, "two"), tmp_path, monkeypatch, 2).values())
    six = sum(_turn(init_home(None, "six"), tmp_path, monkeypatch, 6).values())
    assert (six - two) / 4 <= PER_CALL_MAX, (two, six)

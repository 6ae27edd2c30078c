"""holon.context.compaction: folding the oldest turns into episodes and moving the window."""

from __future__ import annotations

import hashlib

from context_helpers import settled_turn

from holon.agent.handle import Agent
from holon.context import compaction, episodes, history, workingmemory
from holon.store import jsonl


def _turn(a: Agent, i: int, *, remember: bool = False) -> None:
    """One settled turn in the transcript: message, a round running a command, its result."""
    call = {"id": "c1", "name": "ExecCommand", "arguments": {"cmd": f"pytest -k t{i}"}}
    result = {
        "key": "0:c1",
        "call_id": "c1",
        "tool_name": "ExecCommand",
        "status": "success",
        "envelope": {"status": "success", "result": {"exit_status": 0}},
        "rendered": "1 passed",
    }
    settled_turn(a, i, f"ask {i}", calls=[(call, result)], remember=remember)


def _fold(a: Agent, dropped, new_start):
    return compaction.fold(
        a,
        dropped,
        new_start,
        reason="budget",
        turn_id="turn_x",
        before_tokens=900,
        after_tokens=300,
    )


def _ledger(home) -> list[dict]:
    return list(jsonl.read(home.context_episodes))


def test_uncovered_turns_become_deterministic_episodes(agent):
    a = Agent(agent)
    for i in range(3):
        _turn(a, i)
    turns = history.read_turns(agent.transcript, 0)
    record = _fold(a, turns[:2], turns[2].offset)
    (ep,) = _ledger(agent)
    seed = (turns[0].turn_id + str(turns[0].offset)).encode()
    assert ep["id"] == "ep-" + hashlib.sha256(seed).hexdigest()[:20]
    assert record["episodes"] == [ep["id"]]
    assert ep["reason"] == "compaction" and ep["agent_id"] == "a"
    assert ep["turns"]["count"] == 2
    assert (ep["turns"]["first_turn_id"], ep["turns"]["last_turn_id"]) == ("turn_0", "turn_1")
    assert ep["messages"] == {"first_id": "msg_0", "last_id": "msg_1", "count": 2}
    assert ep["transcript"] == {"start_offset": turns[0].offset, "end_offset": turns[1].end}
    assert [c["cmd"] for c in ep["verification"]] == ["pytest -k t0", "pytest -k t1"]
    assert "ask 0" in ep["summary"] and "replied: answer 1" in ep["summary"]
    state = a.state()
    ctx = state.context
    assert ctx.window_start == turns[2].offset
    assert ctx.compression_epoch == 1 and ctx.compacted_turns == 2
    assert ctx.episodes_through == turns[1].end
    assert ctx.snapshot == workingmemory.render(state.working_memory.current)
    assert ctx.last_compaction == record
    assert state.compacted_message_count == 2
    assert state.working_memory.archived_episode_count == 1
    assert state.working_memory.last_prompted == ctx.snapshot
    assert record == {
        "at": record["at"],
        "reason": "budget",
        "turn_id": "turn_x",
        "epoch": 1,
        "folded_turns": 2,
        "episodes": [ep["id"]],
        "rollups": [],
        "window_start": turns[2].offset,
        "before_tokens": 900,
        "after_tokens": 300,
    }
    events = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "context_compacted"]
    assert events == [record]


def test_many_uncovered_turns_are_chunked_by_the_size_cap(agent):
    a = Agent(agent)
    n = episodes.MAX_TURNS + 3
    for i in range(n + 1):
        _turn(a, i)
    turns = history.read_turns(agent.transcript, 0)
    _fold(a, turns[:n], turns[n].offset)
    eps = _ledger(agent)
    assert [e["turns"]["count"] for e in eps] == [episodes.MAX_TURNS, 3]
    assert eps[1]["transcript"]["start_offset"] == turns[episodes.MAX_TURNS].offset
    assert eps[1]["transcript"]["end_offset"] == turns[n - 1].end


def test_fold_finalizes_the_open_builder_when_it_covers_folded_turns(agent):
    a = Agent(agent)
    for i in range(3):
        _turn(a, i, remember=True)
    builder = a.state().working_memory.active_episode_builder
    assert builder["turns"] == 3 and _ledger(agent) == []
    turns = history.read_turns(agent.transcript, 0)
    record = _fold(a, turns[:1], turns[1].offset)
    (ep,) = _ledger(agent)
    assert ep["id"] == builder["id"] and ep["reason"] == "compaction"
    assert ep["turns"]["count"] == 3  # the builder closes whole, not just its folded turn
    assert record["episodes"] == [ep["id"]]
    wm = a.state().working_memory
    assert wm.active_episode_builder is None and wm.active_episode_id is None
    assert wm.archived_episode_count == 1
    assert a.state().context.episodes_through == turns[2].end
    assert a.state().context.window_start == turns[1].offset


def test_a_builder_after_the_folded_turns_stays_open(agent):
    a = Agent(agent)
    _turn(a, 0)  # older than episodes: no builder saw it
    _turn(a, 1, remember=True)
    _turn(a, 2, remember=True)
    turns = history.read_turns(agent.transcript, 0)
    builder = a.state().working_memory.active_episode_builder
    _fold(a, turns[:1], turns[1].offset)
    (ep,) = _ledger(agent)
    assert ep["id"].startswith("ep-") and ep["turns"]["count"] == 1  # only the legacy turn
    assert a.state().working_memory.active_episode_builder == builder


def test_folding_the_same_turns_again_appends_nothing(agent):
    a = Agent(agent)
    for i in range(4):
        _turn(a, i)
    turns = history.read_turns(agent.transcript, 0)
    _fold(a, turns[:2], turns[2].offset)
    state_after = a.state().model_dump()
    again = _fold(a, turns[:2], turns[2].offset)
    assert len(_ledger(agent)) == 1
    assert again["episodes"] == []
    assert a.state().model_dump() == state_after  # the window does not move twice


def test_a_fold_replayed_after_a_crash_writes_no_duplicate(agent):
    """Episodes are appended before the state moves the window: a crash in between repeats the
    fold, and the stable ids keep the ledger free of duplicates."""
    a = Agent(agent)
    _turn(a, 0)
    _turn(a, 1, remember=True)
    _turn(a, 2, remember=True)
    _turn(a, 3)
    turns = history.read_turns(agent.transcript, 0)
    before = agent.state_json.read_bytes()
    _fold(a, turns[:2], turns[2].offset)
    first = [e["id"] for e in _ledger(agent)]
    assert len(first) == 2  # the legacy turn, then the builder
    agent.state_json.write_bytes(before)  # the state write never happened
    fresh = Agent(agent)
    _fold(fresh, turns[:2], turns[2].offset)
    assert [e["id"] for e in _ledger(agent)] == first
    assert fresh.state().context.window_start == turns[2].offset


def test_a_legacy_episode_does_not_say_turn_none(agent):
    a = Agent(agent)
    for i in range(3):
        _turn(a, i)
    turns = history.read_turns(agent.transcript, 0)
    _fold(a, turns[:2], turns[2].offset)
    (ep,) = _ledger(agent)
    assert "None" not in ep["summary"]
    assert "None" not in episodes.heading(ep)

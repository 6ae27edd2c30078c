"""Compaction: fold the oldest turns of the conversation window into episodes and move the
window's start past them.

Every folded turn ends up in a finalized episode before the window moves: the open builder is
closed when it covers a folded turn, and turns no builder ever saw (an agent older than
episodes) get episodes built from their transcript entries. Episodes are appended before the
state that moves the window is written, so a crash in between repeats nothing and loses nothing
(ids are stable, appends deduplicate).
"""

from __future__ import annotations

import hashlib
from typing import Any

from holon import clock
from holon.agent.handle import Agent
from holon.context import episodes, evidence, memoryfiles, rollups, summaries, workingmemory
from holon.context.history import Turn
from holon.model.records import AgentState
from holon.store import jsonl


def _legacy_turn(t: Turn) -> tuple[dict[str, Any], dict[str, Any], list[dict], dict[str, dict]]:
    rounds = [e.get("data", {}) for e in t.entries if e.get("kind") == "assistant_round"]
    results = {
        e["data"]["key"]: e["data"]
        for e in t.entries
        if e.get("kind") == "tool_result" and isinstance(e.get("data", {}).get("key"), str)
    }
    failed = any(e.get("kind") == "runtime_failure" for e in t.entries)
    turn = {
        "turn_id": t.turn_id or f"offset-{t.offset}",
        "turn_index": None,
        "message_id": t.entries[0].get("message_id") if t.entries else None,
        "offset": t.offset,
        "end": t.end,
        "work_item_id": None,
        "outcome": "failed" if failed else "completed",
    }
    return turn, t.message, rounds, results


def _legacy_episodes(agent: Agent, turns: list[Turn], current: dict[str, Any]) -> list[dict]:
    out = []
    carry = episodes.carry_forward(agent.home, current)
    for i in range(0, len(turns), episodes.MAX_TURNS):
        chunk = turns[i : i + episodes.MAX_TURNS]
        builder: dict[str, Any] | None = None
        for t in chunk:
            turn, message, rounds, results = _legacy_turn(t)
            if builder is None:
                builder = episodes.open_builder(turn)
                seed = (turn["turn_id"] + str(t.offset)).encode("utf-8")
                builder["id"] = "ep-" + hashlib.sha256(seed).hexdigest()[:20]
            episodes.merge(builder, turn, evidence.turn_evidence(message, rounds, results))
        assert builder is not None
        out.append(
            episodes.finalize(
                builder,
                agent_id=agent.id,
                reason="compaction",
                carry_forward=carry,
                waiting=None,
            )
        )
    return out


def fold(
    agent: Agent,
    dropped: list[Turn],
    new_start: int,
    *,
    reason: str,
    turn_id: str | None,
    before_tokens: int,
    after_tokens: int,
    memory: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Fold `dropped` (the oldest turns of the window) into episodes and start the window at
    `new_start`; `memory` (the memory files as they are, when not given) becomes the prefix's
    (holon.context.memoryfiles). Returns the compaction record kept in state and in the
    event."""
    state = agent.state()
    ctx, wm = state.context, state.working_memory.model_copy(deep=True)
    builder = wm.active_episode_builder
    first_built = builder["start_offset"] if builder else None
    uncovered = [
        t
        for t in dropped
        if t.offset >= ctx.episodes_through and (first_built is None or t.offset < first_built)
    ]
    records = _legacy_episodes(agent, uncovered, wm.current) if uncovered else []
    if builder is not None and builder["start_offset"] < new_start and builder["turns"]:
        records.append(
            episodes.finalize(
                builder,
                agent_id=agent.id,
                reason="compaction",
                carry_forward=episodes.carry_forward(agent.home, wm.current),
                waiting=wm.current.get("waiting"),
            )
        )
        wm.active_episode_builder = None
        wm.active_episode_id = None
    known = {r.get("id") for r in jsonl.tail(agent.home.context_episodes, len(records) + 2)}
    for rec in records:
        if rec["id"] not in known:
            jsonl.append(agent.home.context_episodes, rec)
    rolled = rollups.roll_up(agent.home, agent.id, new_start)
    record = {
        "at": clock.now_iso(),
        "reason": reason,
        "turn_id": turn_id,
        "epoch": ctx.compression_epoch + 1,
        "folded_turns": len(dropped),
        "episodes": [r["id"] for r in records],
        "rollups": [r["id"] for r in rolled],
        "window_start": new_start,
        "before_tokens": before_tokens,
        "after_tokens": after_tokens,
    }
    snapshot = workingmemory.render(wm.current)
    memory = memoryfiles.current(agent.home) if memory is None else memory

    def apply(s: AgentState) -> None:
        c = s.context
        if new_start <= c.window_start:
            return
        c.window_start = new_start
        c.compression_epoch += 1
        c.compacted_turns += len(dropped)
        c.snapshot = snapshot
        c.snapshot_revision = wm.revision
        c.last_compaction = record
        memoryfiles.rebased(c, memory)
        if records:
            c.episodes_through = max(
                c.episodes_through, max(r["transcript"]["end_offset"] for r in records)
            )
        s.compacted_message_count += len(dropped)
        summaries.queue(s, records)  # written, when wanted, at the turn's settle
        wm.archived_episode_count += len(records)
        wm.last_prompted = snapshot
        wm.last_prompted_revision = wm.revision
        wm.pending_delta = []
        s.working_memory = wm

    agent.update_state(apply)
    agent.event("context_compacted", **record)
    return record

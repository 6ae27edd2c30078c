"""After a turn settles: advance working memory and the open episode, finalizing an episode on a
semantic boundary. Crash-safe: episodes are appended (deduplicated by id) before the state that
closes them is written, and a turn already merged is skipped."""

from __future__ import annotations

from typing import Any

from holon.agent.handle import Agent
from holon.context import episodes, evidence, summaries, workingmemory
from holon.model.records import AgentState, WorkingMemory


def merge(
    agent: Agent,
    state: AgentState,
    *,
    turn: dict[str, Any],
    message: dict[str, Any],
    rounds: list[dict[str, Any]],
    results: dict[str, dict[str, Any]],
    delivered: bool,
) -> list[dict[str, Any]]:
    """Advance `state` (a copy about to be written, under the state lock: a turn's settle merges
    this into its one state write) with the settled turn, appending the episodes it finalizes
    first (log, then change). Returns them; `announce` them once the state is written."""
    if state.working_memory.last_turn_id == turn["turn_id"]:
        return []
    ev = evidence.turn_evidence(message, rounds, results)
    wm = state.working_memory
    workingmemory.advance(wm, workingmemory.derive(agent, state, ev))
    records: list[dict[str, Any]] = []
    builder = wm.active_episode_builder
    if builder is not None and builder.get("work_item_id") != turn.get("work_item_id"):
        records.append(_close(agent, wm, builder, "work_item_switch"))
        builder = None
    if builder is None:
        builder = episodes.open_builder(turn)
    episodes.merge(builder, turn, ev)
    reason = episodes.boundary(builder, delivered=delivered, waiting=wm.current.get("waiting"))
    if reason:
        records.append(_close(agent, wm, builder, reason))
        builder = None
    wm.active_episode_builder = builder
    wm.active_episode_id = builder["id"] if builder else None
    wm.archived_episode_count += len(records)
    wm.last_turn_id = turn["turn_id"]
    for rec in records:
        episodes.append(agent.home.context_episodes, rec)
        state.context.episodes_through = max(
            state.context.episodes_through, rec["transcript"]["end_offset"]
        )
    summaries.queue(state, records)
    return records


def announce(agent: Agent, records: list[dict[str, Any]]) -> None:
    """The events of the episodes a merge finalized (after the state that closes them)."""
    for rec in records:
        agent.event(
            "context_episode_finalized",
            episode_id=rec["id"],
            reason=rec["reason"],
            turns=rec["turns"],
        )


def _close(agent: Agent, wm: WorkingMemory, builder: dict[str, Any], reason: str) -> dict[str, Any]:
    return episodes.finalize(
        builder,
        agent_id=agent.id,
        reason=reason,
        carry_forward=episodes.carry_forward(agent.home, wm.current),
        waiting=wm.current.get("waiting"),
    )

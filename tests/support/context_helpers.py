"""Settled turns written straight into a home's transcript, for the context and prompt tests."""

from __future__ import annotations

from typing import Any

from holon.agent.handle import Agent
from holon.context import progress


def settled_turn(
    a: Agent,
    i: int,
    text: str,
    *,
    calls: list[tuple[dict[str, Any], dict[str, Any]]] = (),
    remember: bool = False,
    **message: Any,
) -> None:
    """Turn `i` (ids turn_<i>, msg_<i>): its message, one round answering `answer <i>` with
    `calls` (each a tool call and its tool_result record), then its terminal. With `remember`,
    settles it into working memory and the open episode as the runtime would."""
    offset = a.transcript_offset()
    tid, mid = f"turn_{i}", f"msg_{i}"
    message.setdefault("message_kind", "operator_prompt")
    msg = a.transcript("message", turn_id=tid, message_id=mid, text=text, **message)
    rnd = {"text": f"answer {i}", "tool_calls": [call for call, _ in calls]}
    a.transcript("assistant_round", turn_id=tid, message_id=mid, **rnd)
    for _, result in calls:
        a.transcript("tool_result", turn_id=tid, message_id=mid, **result)
    a.transcript("turn_terminal", turn_id=tid, message_id=mid, kind="completed")
    if remember:
        after_turn(
            a,
            turn={
                "turn_id": tid,
                "turn_index": i,
                "message_id": mid,
                "offset": offset,
                "end": a.transcript_offset(),
                "work_item_id": None,
                "outcome": "completed",
            },
            message=msg["data"],
            rounds=[rnd],
            results={result["key"]: result for _, result in calls},
            delivered=False,
        )


def after_turn(agent: Agent, **turn: Any) -> list[dict[str, Any]]:
    """What a turn's settle does with its progress, in a state write of its own: merge the settled
    turn into the state, then announce the episodes it finalized."""
    records: list[dict[str, Any]] = []
    agent.update_state(lambda s: records.extend(progress.merge(agent, s, **turn)))
    progress.announce(agent, records)
    return records

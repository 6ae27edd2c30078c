"""A turn's state: what it has done so far, rebuilt from the transcript when a crashed turn resumes.

Every round and every tool call result is appended to the transcript as it
happens; a tool call first writes an intent record (fsynced). A message that is
redelivered after a crash resumes from what was persisted: the transcript
entries of its turn (found from the offset recorded in `state.inflight`) are
replayed, so completed rounds are not sent again, completed tool calls are not
run again, and a call with an intent but no result is reported to the model as
interrupted, outcome unknown.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from holon import clock
from holon.agent.handle import Agent
from holon.ids import new_id
from holon.model.conversation import TokenUsage
from holon.model.messages import MessageEnvelope
from holon.store import jsonl


@dataclass
class TurnState:
    turn_id: str
    message: MessageEnvelope
    rounds: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # call key -> tool_result record
    intents: dict[str, dict[str, Any]] = field(default_factory=dict)  # call key -> tool_call record
    timelines: list[dict[str, Any]] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    started: float = field(default_factory=time.monotonic)
    resumed: bool = False
    settled: bool = False
    brief: dict[str, Any] | None = None
    offset: int = 0  # transcript offset of the turn's message line
    # this turn's transcript entries in order (message, turn_context, rounds, results): the
    # current turn of the prompt is built from these, never re-read from disk
    entries: list[dict[str, Any]] = field(default_factory=list)
    prior: Any = None  # the prompt's cached read of earlier turns (holon.prompt.request)
    view: Any = None  # the prompt's view of this turn, with per-round sizes (holon.prompt.request)
    overflow_retried: bool = False
    # (model ref, raw estimate, provider input tokens) per round, and the last request's figures:
    # persisted into state.context when the turn settles
    observed: list[tuple[str, int, int]] = field(default_factory=list)
    last_request: dict[str, Any] | None = None

    @property
    def has_context(self) -> bool:
        return any(e.get("kind") == "turn_context" for e in self.entries)

    @property
    def final_text(self) -> str:
        return self.rounds[-1].get("text", "") if self.rounds else ""


@dataclass
class TurnResult:
    agent_id: str
    message_id: str
    turn_id: str
    status: str  # completed | failed
    final_text: str
    token_usage: dict[str, Any]
    provider_attempt_timeline: dict[str, Any] | None
    failure_artifact: dict[str, Any] | None = None
    brief: dict[str, Any] | None = None
    rounds: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def call_key(round_index: int, call_id: str) -> str:
    return f"{round_index}:{call_id}"


def begin(agent: Agent, message: MessageEnvelope) -> TurnState:
    """Start the turn for `message`, or pick up the one a crashed tick left behind."""
    inflight = agent.state().inflight.get(message.id)
    if inflight:
        return _resume(agent, message, inflight)
    turn_id = new_id("turn")
    offset = agent.transcript_offset()

    def mark(s: Any) -> None:
        s.inflight[message.id] = {
            "turn_id": turn_id,
            "transcript_offset": offset,
            "started_at": clock.now_iso(),
            "pid": os.getpid(),
        }

    agent.update_state(mark)
    entry = agent.transcript(
        "message",
        turn_id=turn_id,
        message_id=message.id,
        message_kind=message.kind.value,
        origin_kind=message.origin.kind,
        origin=message.origin.model_dump(mode="json"),
        trust=message.trust.value,
        authority_class=message.authority_class.value,
        priority=message.priority.value,
        delivery_surface=message.delivery_surface.value if message.delivery_surface else None,
        text=message.body_text(),
        body_type=message.body.type,
    )
    agent.event(
        "message_processing_started",
        message_id=message.id,
        turn_id=turn_id,
        delivery_attempts=message.delivery_attempts,
    )
    return TurnState(turn_id=turn_id, message=message, offset=offset, entries=[entry])


def _resume(agent: Agent, message: MessageEnvelope, inflight: dict[str, Any]) -> TurnState:
    offset = int(inflight.get("transcript_offset", 0))
    ts = TurnState(turn_id=inflight["turn_id"], message=message, resumed=True, offset=offset)
    entries, _ = jsonl.read_from(agent.home.transcript, offset)
    for e in entries:
        if e.get("turn_id") != ts.turn_id:
            continue
        kind, data = e.get("kind"), e.get("data", {})
        if kind in ("message", "turn_context", "assistant_round", "tool_result"):
            ts.entries.append(e)
        if kind == "assistant_round":
            ts.rounds.append(data)
            ts.usage = ts.usage + TokenUsage(**data.get("token_usage", {}))
            if data.get("provider_attempt_timeline"):
                ts.timelines.append(data["provider_attempt_timeline"])
        elif kind == "tool_call":
            ts.intents[data["key"]] = data
        elif kind == "tool_result":
            ts.results[data["key"]] = data
        elif kind == "brief":
            ts.brief = data.get("brief")
        elif kind == "turn_terminal":
            ts.settled = True
    agent.event(
        "turn_resumed",
        message_id=message.id,
        turn_id=ts.turn_id,
        rounds=len(ts.rounds),
        tool_results=len(ts.results),
        interrupted_calls=len(set(ts.intents) - set(ts.results)),
    )
    return ts

"""A turn's state: what it has done so far, rebuilt from the transcript when a crashed turn resumes.

Every round and every tool call result is appended to the transcript as it
happens; a tool call first writes an intent record, durable before the call
runs (holon.store.groupcommit). A message that is redelivered after a crash
resumes from what was persisted: the transcript
entries of its turn (found from the offset recorded in `state.inflight`) are
replayed, so completed rounds are not sent again, completed tool calls are not
run again, and a call with an intent but no result is reported to the model as
interrupted, outcome unknown. A message deferred after a provider outage
resumes the same way. When other turns were written after the resumed turn's
last segment, it continues in a new segment: its message line is written again
(`continued: true`) so each stretch of the transcript belongs to one turn.
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
from holon.model.dicts import InflightTurn
from holon.model.messages import MessageEnvelope
from holon.model.records import AgentState, AgentStatus
from holon.store import jsonl


@dataclass
class Running:
    """The agent running the turn (a tick's turn): marked in the turn's first state write, idle
    again with last_tick_at in its settle's (a deferred turn, which has no settle: `idle`)."""

    continuation: dict[str, Any]  # what the agent was told on waking (last_continuation)
    self_driven: bool  # counts toward the cap of self-driven turns (holon.agent.autonomy)

    def start(self, s: AgentState, message: MessageEnvelope, *, resumed: bool) -> None:
        s.status = AgentStatus.awake_running
        s.current_run_id = message.id
        s.run_owner_pid = os.getpid()
        s.last_wake_reason = message.kind.value
        s.last_continuation = self.continuation
        if not resumed:
            s.bound_work_item_id = s.current_work_item_id
            s.self_driven_turns = s.self_driven_turns + 1 if self.self_driven else 0


def idle(s: AgentState) -> None:
    """The agent idle again after its turn, with last_tick_at."""
    s.current_run_id = None
    s.run_owner_pid = None
    if s.status == AgentStatus.awake_running:
        s.status = AgentStatus.awake_idle
    s.last_tick_at = clock.now_iso()


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
    terminal_kind: str | None = None  # the turn_terminal's kind once settled (completed|aborted)
    # the turn's runtime_failure record, once it began to settle as failed: a resumed turn
    # finishes that settle instead of going on
    failure: dict[str, Any] | None = None
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
    # the model an operator chose for this turn (a tick's --model, else the message's): the
    # messages the turn causes carry it (timers, task results, follow-ups)
    model_ref: str | None = None
    # the working-memory revision this turn's turn_context showed the delta of: the prompted base
    # moves there in the settle's state write (None: this process wrote no turn_context)
    prompted_revision: int | None = None
    # the memory files as this turn began, when the agent has no basis for its prompt's prefix yet
    # (holon.context.memoryfiles): the settle's state write makes them the basis
    memory_basis: dict[str, str] | None = None
    # the agent running this turn (a tick's): idle again in the settle's one state write
    running: Running | None = None

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
    status: str  # completed | failed | deferred (a provider outage: the message is re-queued)
    final_text: str
    token_usage: dict[str, Any]
    provider_attempt_timeline: dict[str, Any] | None
    failure_artifact: dict[str, Any] | None = None
    brief: dict[str, Any] | None = None
    rounds: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    dead_letter: bool = False  # failed for good: the message goes to queue/dead/, not away
    retry_after_s: float | None = None  # deferred: what the provider asked for, if anything
    model_ref: str | None = None  # the turn's carried model (TurnState.model_ref)


def call_key(round_index: int, call_id: str) -> str:
    return f"{round_index}:{call_id}"


def begin(
    agent: Agent,
    message: MessageEnvelope,
    *,
    model: str | None = None,
    running: Running | None = None,
) -> TurnState:
    """Start the turn for `message`, or pick up the one a crashed tick (or a deferral) left
    behind. Its model (TurnState.model_ref): the tick's `model`, else the one the turn already
    ran with, else the message's. `running`: the agent is marked running in the same state write
    (the turn's first: in flight, with its transcript offset, before its message line)."""
    inflight = agent.state().inflight.get(message.id)
    if inflight:
        return _resume(agent, message, inflight, model, running)
    model_ref = model or message.model_ref
    turn_id = new_id("turn")
    offset = agent.transcript_offset()

    def mark(s: AgentState) -> None:
        if running is not None:
            running.start(s, message, resumed=False)
        turn: InflightTurn = {
            "turn_id": turn_id,
            "transcript_offset": offset,
            "started_at": clock.now_iso(),
            "pid": os.getpid(),
            "model_ref": model_ref,
        }
        s.inflight[message.id] = dict(turn)

    agent.update_state(mark)
    entry = _message_entry(agent, message, turn_id)
    agent.event(
        "message_processing_started",
        message_id=message.id,
        turn_id=turn_id,
        delivery_attempts=message.delivery_attempts,
    )
    ts = TurnState(turn_id=turn_id, message=message, offset=offset, entries=[entry])
    ts.model_ref, ts.running = model_ref, running
    return ts


def _message_entry(
    agent: Agent, message: MessageEnvelope, turn_id: str, **extra: Any
) -> dict[str, Any]:
    return agent.transcript(
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
        **extra,
    )


def _resume(
    agent: Agent,
    message: MessageEnvelope,
    inflight: dict[str, Any],
    model: str | None,
    running: Running | None,
) -> TurnState:
    offset = int(inflight.get("transcript_offset", 0))  # where the turn began
    segment = int(inflight.get("segment_offset", offset))  # where its current segment began
    ts = TurnState(turn_id=inflight["turn_id"], message=message, resumed=True, offset=segment)
    ts.model_ref = model or inflight.get("model_ref") or message.model_ref
    ts.running = running
    if running is not None or ts.model_ref != inflight.get("model_ref"):

        def resumed(s: AgentState) -> None:
            if running is not None:
                running.start(s, message, resumed=True)
            s.inflight[message.id].update(model_ref=ts.model_ref)

        agent.update_state(resumed)
    entries, _ = jsonl.read_from(agent.home.transcript, offset)
    interleaved = False  # another turn's message came after this turn's last segment began
    for e in entries:
        if e.get("turn_id") != ts.turn_id:
            interleaved = interleaved or e.get("kind") == "message"
            continue
        kind, data = e.get("kind"), e.get("data", {})
        if kind == "message":  # this turn's message, or the start of a later segment of it
            ts.entries, interleaved = [], False
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
        elif kind == "runtime_failure":
            ts.failure = data
        elif kind == "turn_terminal":
            ts.settled, ts.terminal_kind = True, data.get("kind")
    if interleaved and not ts.settled:
        _new_segment(agent, ts)
    marker = {"new_segment": True} if interleaved and not ts.settled else {}
    agent.event(
        "turn_resumed",
        message_id=message.id,
        turn_id=ts.turn_id,
        rounds=len(ts.rounds),
        tool_results=len(ts.results),
        interrupted_calls=len(set(ts.intents) - set(ts.results)),
        **marker,
    )
    return ts


def _new_segment(agent: Agent, ts: TurnState) -> None:
    """Continue the turn after the other turns written since it began: its message line again,
    where the state now says its segment begins. The state goes first: it is only where to look,
    and a crash before the line leaves no line, which the next attempt writes (a crash after it
    finds the line and writes none). What the turn did before stays in the transcript, replayed as
    an earlier turn."""
    offset = agent.transcript_offset()
    agent.update_state(lambda s: s.inflight[ts.message.id].update(segment_offset=offset))
    entry = _message_entry(agent, ts.message, ts.turn_id, continued=True)
    ts.offset, ts.entries, ts.view, ts.prior = offset, [entry], None, None

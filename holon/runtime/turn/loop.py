"""The turn loop, durable: provider round -> tool calls -> provider round ... until no tool calls.

Every round and every tool call result is appended to the transcript as it
happens; a tool call first writes an intent record (fsynced). A message that is
redelivered after a crash resumes from what was persisted: the transcript
entries of its turn (found from the offset recorded in `state.inflight`) are
replayed, completed rounds are not sent again, completed tool calls are not
run again, and a call with an intent but no result is reported to the model as
interrupted, outcome unknown.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from holon import clock, config
from holon.ids import new_id
from holon.prompt import assemble
from holon.model.conversation import ProviderFailure, ProviderRequest, ProviderResponse, TokenUsage
from holon.agent.handle import Agent
from holon.runtime.turn.settle import settle_failure, settle_success
from holon.store import jsonl

DEFAULT_MAX_ROUNDS = 50
INTERRUPTED = {"kind": "tool_interrupted", "message": "tool call was interrupted by a crash; its outcome is unknown",
               "details": None, "retryable": True,
               "recovery_hint": "check whether the action took effect (inspect files or state) before retrying it"}


@dataclass
class TurnState:
    turn_id: str
    message: dict[str, Any]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    intents: dict[str, dict[str, Any]] = field(default_factory=dict)
    timelines: list[dict[str, Any]] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    started: float = field(default_factory=time.monotonic)
    resumed: bool = False
    settled: bool = False
    brief: dict[str, Any] | None = None


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


def max_rounds() -> int:
    return config.env_int("HOLON_MAX_ROUNDS", "runtime.max_rounds", DEFAULT_MAX_ROUNDS)


def _call_key(round_index: int, call_id: str) -> str:
    return f"{round_index}:{call_id}"


def begin(agent: Agent, message: dict[str, Any]) -> TurnState:
    """Start the turn for `message`, or pick up the one a crashed tick left behind."""
    state = agent.state()
    inflight = state.inflight.get(message["id"])
    if inflight:
        return _resume(agent, message, inflight)
    turn_id = new_id("turn")
    offset = agent.transcript_offset()

    def mark(s: Any) -> None:
        s.inflight[message["id"]] = {"turn_id": turn_id, "transcript_offset": offset,
                                     "started_at": clock.now_iso(), "pid": os.getpid()}
    agent.update_state(mark)
    body = message.get("body", {})
    from holon.model.messages import MessageEnvelope

    text = MessageEnvelope.model_validate(message).body_text()
    agent.transcript("message", turn_id=turn_id, message_id=message["id"], message_kind=message["kind"],
                     origin_kind=message["origin"]["kind"], origin=message["origin"], trust=message["trust"],
                     authority_class=message["authority_class"], priority=message["priority"],
                     delivery_surface=message.get("delivery_surface"), text=text, body_type=body.get("type"))
    agent.event("message_processing_started", message_id=message["id"], turn_id=turn_id,
                delivery_attempts=message.get("delivery_attempts", 0))
    return TurnState(turn_id=turn_id, message=message)


def _resume(agent: Agent, message: dict[str, Any], inflight: dict[str, Any]) -> TurnState:
    ts = TurnState(turn_id=inflight["turn_id"], message=message, resumed=True)
    entries, _ = jsonl.read_from(agent.home.transcript, int(inflight.get("transcript_offset", 0)))
    for e in entries:
        if e.get("turn_id") != ts.turn_id:
            continue
        kind, data = e.get("kind"), e.get("data", {})
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
    agent.event("turn_resumed", message_id=message["id"], turn_id=ts.turn_id, rounds=len(ts.rounds),
                tool_results=len(ts.results), interrupted_calls=len(set(ts.intents) - set(ts.results)))
    return ts


def run(agent: Agent, message: dict[str, Any], *, model: str | None = None) -> TurnResult:
    """Run (or resume) one turn for an admitted message and settle it."""
    from holon.runtime.turn import context as execution

    ts = begin(agent, message)
    if ts.settled:
        return settle_success(agent, ts, already=True)
    chain = execution.model_chain(agent, model)
    if chain is None:
        failure = ProviderFailure("no_model_configured", "no model is configured for this agent",
                                  category="runtime")
        return settle_failure(agent, ts, failure, None)
    while True:
        if ts.rounds:
            last = ts.rounds[-1]
            _run_pending_calls(agent, ts, len(ts.rounds) - 1, last)
            if not last.get("tool_calls"):
                return settle_success(agent, ts)
        if len(ts.rounds) >= max_rounds():
            failure = ProviderFailure("max_rounds_exceeded",
                                      f"turn stopped after {len(ts.rounds)} provider rounds without finishing",
                                      category="runtime")
            return settle_failure(agent, ts, failure, ts.timelines[-1] if ts.timelines else None)
        from holon.providers.runner import RoundFailed

        try:
            execution.check_budget(agent, ts.usage)
        except ProviderFailure as exc:
            return settle_failure(agent, ts, exc, None)
        try:
            response, timeline, timing = _provider_round(agent, ts, chain)
        except RoundFailed as exc:
            return settle_failure(agent, ts, exc.failure, exc.timeline)
        _record_round(agent, ts, response, timeline, timing)


def _provider_round(agent: Agent, ts: TurnState, chain: list[str]) -> tuple[ProviderResponse, dict, dict]:
    from holon.providers import resolve, runner
    from holon.runtime.turn import context as execution

    t0 = time.monotonic()
    request = execution.build_request(agent, chain[0], ts)
    agent.event("turn_context_built", turn_id=ts.turn_id, message_id=ts.message["id"],
                context_build_ms=int((time.monotonic() - t0) * 1000), conversation_items=len(request.conversation))
    started_at = clock.now_iso()
    t1 = time.monotonic()
    response, timeline = runner.run_round(
        request, chain, make=lambda ref: resolve.make_provider(ref, home=agent.home.root))
    timing = {"context_build_ms": int((t1 - t0) * 1000), "provider_round_ms": int((time.monotonic() - t1) * 1000),
              "provider_started_at": started_at, "provider_completed_at": clock.now_iso()}
    return response, timeline, timing


def _record_round(agent: Agent, ts: TurnState, response: ProviderResponse, timeline: dict, timing: dict) -> None:
    usage = response.usage.model_dump()
    data = {"round_index": len(ts.rounds), "text": response.text,
            "tool_calls": [c.model_dump() for c in response.tool_calls], "stop_reason": response.stop_reason,
            "model_ref": timeline.get("winning_model_ref"), "response_id": response.response_id,
            "input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens,
            "token_usage": usage, "provider_attempt_timeline": timeline}
    agent.transcript("assistant_round", turn_id=ts.turn_id, message_id=ts.message["id"], **data)
    ts.rounds.append(data)
    ts.timelines.append(timeline)
    ts.usage = ts.usage + response.usage
    agent.event("provider_round_completed", turn_id=ts.turn_id, round_index=data["round_index"],
                model_ref=data["model_ref"], token_usage=usage, provider_attempt_timeline=timeline, **timing)
    agent.event("assistant_round_recorded", turn_id=ts.turn_id, round_index=data["round_index"],
                text_preview=response.text[:200], tool_names=[c.name for c in response.tool_calls])


def _run_pending_calls(agent: Agent, ts: TurnState, round_index: int, round_data: dict[str, Any]) -> None:
    from holon.runtime.turn import context as execution

    for call in round_data.get("tool_calls", []):
        key = _call_key(round_index, call["id"])
        if key in ts.results:
            continue
        if key in ts.intents:
            env = {"tool_name": call["name"], "status": "error", "summary_text": INTERRUPTED["message"],
                   "result": None, "error": INTERRUPTED}
            from holon.tools.envelope import render_error

            _record_result(agent, ts, key, call, env, render_error(env), 0)
            continue
        intent = {"key": key, "call_id": call["id"], "name": call["name"], "arguments": call.get("arguments"),
                  "raw_arguments": call.get("raw_arguments"), "round_index": round_index}
        agent.transcript("tool_call", turn_id=ts.turn_id, message_id=ts.message["id"], **intent)
        ts.intents[key] = intent
        t0 = time.monotonic()
        env, rendered = execution.call_tool(agent, ts, call, round_data)
        _record_result(agent, ts, key, call, env, rendered, int((time.monotonic() - t0) * 1000))


def _record_result(agent: Agent, ts: TurnState, key: str, call: dict, env: dict, rendered: str,
                   duration_ms: int) -> None:
    data = {"key": key, "call_id": call["id"], "tool_name": call["name"], "status": env["status"],
            "envelope": env, "rendered": rendered, "duration_ms": duration_ms}
    agent.transcript("tool_result", turn_id=ts.turn_id, message_id=ts.message["id"], **data)
    ts.results[key] = data
    event: dict[str, Any] = {"turn_id": ts.turn_id, "tool_name": call["name"], "call_id": call["id"],
                             "status": env["status"], "duration_ms": duration_ms}
    if env["status"] == "error":
        event["tool_error"] = env["error"]
        event["error"] = rendered
    agent.event("tool_executed", **event)

"""The turn loop: provider round -> tool calls -> provider round ... until the model calls no tools.

Durable step by step (see holon.runtime.turn.state): each round is recorded
before its tool calls run, each call's intent before it runs, each result as
it completes. The turn ends in settle, which writes the brief and the state.
The turn is one group commit (holon.store.groupcommit): its records are
written as they happen and fsynced together at barriers, one fsync per file:
before each tool call runs (its intent and all before it), before every state
write, and at the end; a tool runs with its own appends fsynced one by one.
A round limit, a spent token budget or an exhausted script stops the turn
(holon.runtime.turn.stops): settled as failed, never a provider failure.
"""

from __future__ import annotations

import time
from typing import Any

from holon import clock, config
from holon.agent import budget
from holon.agent.handle import Agent
from holon.feed import notify
from holon.model.conversation import ProviderFailure, ProviderResponse
from holon.model.messages import MessageEnvelope
from holon.providers import resolve, runner, scripted
from holon.runtime.turn import context, outage, skills
from holon.runtime.turn.settle import finish_failure, settle_failure, settle_success
from holon.runtime.turn.state import Running, TurnResult, TurnState, begin, call_key
from holon.runtime.turn.stops import BudgetExhausted, RoundLimit, ScriptExhausted, TurnStop
from holon.store import groupcommit, storedonce
from holon.tools import registry
from holon.tools.base import CallOutcome

DEFAULT_MAX_ROUNDS = 50
# after a context-length error the model's window is taken to be this share of what was sent
OVERFLOW_TIGHTEN = 0.75
INTERRUPTED = {
    "kind": "tool_interrupted",
    "message": "tool call was interrupted by a crash; its outcome is unknown",
    "details": None,
    "retryable": True,
    "recovery_hint": (
        "check whether the action took effect (inspect files or state) before retrying it"
    ),
}


def max_rounds() -> int:
    return config.env_int("HOLON_MAX_ROUNDS", "runtime.max_rounds", DEFAULT_MAX_ROUNDS)


def run(
    agent: Agent,
    message: MessageEnvelope,
    *,
    model: str | None = None,
    can_defer: bool = False,
    queue_file: str | None = None,
    running: Running | None = None,
) -> TurnResult:
    """Run (or resume) one turn for an admitted message and settle it. A provider failure decides
    what becomes of the message (holon.runtime.turn.outage): with `can_defer`, an outage leaves the
    turn unsettled (status `deferred`); a permanent failure dead-letters `queue_file`.
    `running`: the agent is marked running in the turn's first state write and idle in its
    settle's (a deferred turn has no settle; its caller idles it)."""
    with groupcommit.group():
        return _run(agent, message, model, can_defer, queue_file, running)


def _run(
    agent: Agent,
    message: MessageEnvelope,
    model: str | None,
    can_defer: bool,
    queue_file: str | None,
    running: Running | None,
) -> TurnResult:
    ts = begin(agent, message, model=model, running=running)
    if ts.failure is not None or ts.terminal_kind == "aborted":
        return finish_failure(agent, ts)  # it crashed while settling as failed
    if ts.settled:
        return settle_success(agent, ts, already=True)
    chain = context.model_chain(agent, ts.model_ref)
    if chain is None:
        failure = ProviderFailure(
            "no_model_configured", "no model is configured for this agent", category="runtime"
        )
        return outage.conclude(agent, ts, failure, None, can_defer=can_defer, queue_file=queue_file)
    if not ts.has_context:
        context.record_turn_context(agent, ts)
    try:
        return _rounds(agent, ts, chain, can_defer=can_defer, queue_file=queue_file)
    except TurnStop as stop:
        return settle_failure(agent, ts, stop, stop.timeline)


def _rounds(
    agent: Agent, ts: TurnState, chain: list[str], *, can_defer: bool, queue_file: str | None
) -> TurnResult:
    """Round after round until the model calls no tools (settled), its provider fails (concluded
    by holon.runtime.turn.outage), or the turn stops (a TurnStop raised)."""
    while True:
        if ts.rounds:
            last = ts.rounds[-1]
            _run_pending_calls(agent, ts, len(ts.rounds) - 1, last)
            if not last.get("tool_calls"):
                return settle_success(agent, ts)
            notify.kick(agent.home)  # a NotifyOperator call reaches its hook before the turn ends
        _check_limits(agent, ts)
        try:
            response, timeline, timing = _provider_round(agent, ts, chain)
        except runner.RoundFailed as exc:
            if isinstance(exc.failure, scripted.Exhausted):
                raise ScriptExhausted(
                    exc.failure.message, diagnostics=exc.failure.diagnostics, timeline=exc.timeline
                ) from None
            return outage.conclude(
                agent, ts, exc.failure, exc.timeline, can_defer=can_defer, queue_file=queue_file
            )
        _record_round(agent, ts, response, timeline, timing)


def _check_limits(agent: Agent, ts: TurnState) -> None:
    """Raise the stop for a turn at its round limit or past a token budget."""
    if len(ts.rounds) >= max_rounds():
        raise RoundLimit(
            f"turn stopped after {len(ts.rounds)} provider rounds without finishing",
            timeline=ts.timelines[-1] if ts.timelines else None,
        )
    try:
        budget.check(agent, ts.usage)
    except budget.Exhausted as exc:
        raise BudgetExhausted(exc.message, diagnostics=exc.diagnostics) from None


def _provider_round(
    agent: Agent, ts: TurnState, chain: list[str]
) -> tuple[ProviderResponse, dict, dict]:
    t0 = time.monotonic()
    assembly = context.build_request(agent, chain[0], ts)
    built = time.monotonic() - t0
    agent.telemetry(
        "turn_context_built",
        turn_id=ts.turn_id,
        message_id=ts.message.id,
        context_build_ms=int(built * 1000),
        context_build_us=int(built * 1_000_000),  # for comparisons below a millisecond
        conversation_items=len(assembly.request.conversation),
        estimated_tokens=assembly.manifest["estimated_tokens"],
        prompt_budget=assembly.manifest["prompt_budget"],
    )
    started_at = clock.now_iso()
    t1 = time.monotonic()
    try:
        response, timeline = _send(agent, assembly, chain)
    except runner.RoundFailed as exc:
        if exc.failure.kind != "context_length_exceeded" or ts.overflow_retried:
            raise
        ts.overflow_retried = True
        first = exc.timeline
        _learn_window(agent, first, assembly)
        same = [_overflowed_model(first) or chain[0]]  # the retry never falls back
        assembly = context.build_request(agent, same[0], ts, reason="overflow")
        recovery = {
            "reason": "context_length_exceeded",
            "retried_with_estimated_tokens": assembly.manifest["estimated_tokens"],
            "prompt_budget": assembly.manifest["prompt_budget"],
            "compaction": assembly.manifest.get("compaction"),
        }
        agent.event("context_overflow_recovery", turn_id=ts.turn_id, **recovery)
        try:
            response, timeline = _send(agent, assembly, same)
        except runner.RoundFailed as again:
            merged = _merge_timelines(first, again.timeline, recovery)
            if again.failure.kind == "context_length_exceeded":
                _learn_window(agent, again.timeline, assembly)
                raise runner.RoundFailed(_overflow_failure(again.failure), merged) from None
            failure = _after_overflow(again.failure, same[0])
            raise runner.RoundFailed(failure, merged) from None
        timeline = _merge_timelines(first, timeline, recovery)
    _calibrate(ts, assembly, response, timeline)
    timing = {
        "context_build_ms": int((t1 - t0) * 1000),
        "provider_round_ms": int((time.monotonic() - t1) * 1000),
        "provider_started_at": started_at,
        "provider_completed_at": clock.now_iso(),
    }
    return response, timeline, timing


def _send(agent: Agent, assembly: Any, chain: list[str]) -> tuple[ProviderResponse, dict]:
    return runner.run_round(
        assembly.request,
        chain,
        make=lambda ref: resolve.make_provider(
            ref,
            home=agent.home.root,
            cursor=agent.home.scripted_cursor,
            continuation=agent.home.provider_continuation,
        ),
    )


def _merge_timelines(first: dict, second: dict, recovery: dict) -> dict:
    """One attempt timeline for the round: the overflowing attempt, then the retry."""
    merged = dict(second)
    merged["attempts"] = list(first.get("attempts", [])) + list(second.get("attempts", []))
    merged["context_recovery"] = recovery
    return merged


def _overflow_failure(failure: ProviderFailure) -> ProviderFailure:
    return ProviderFailure(
        "context_length_exceeded",
        "the prompt did not fit the model's context window even after compacting once; the next "
        f"turn starts from a smaller budget (provider said: {failure.message})",
        status=failure.status,
        diagnostics=failure.diagnostics,
        category=failure.category,
    )


def _overflowed_model(timeline: dict) -> str | None:
    """The model whose context window the request overflowed (the last attempt's)."""
    attempts = timeline.get("attempts") or []
    return (attempts[-1] if attempts else {}).get("model_ref")


def _after_overflow(failure: ProviderFailure, model_ref: str) -> ProviderFailure:
    """The compacted retry failed otherwise: its failure, naming the overflow it followed."""
    failure.message = (
        f"the prompt overflowed the context window of {model_ref}; the compacted retry on the "
        f"same model (no fallback on overflow) then failed: {failure.message}"
    )
    failure.diagnostics = {**(failure.diagnostics or {}), "after": "context_length_exceeded"}
    return failure


def _learn_window(agent: Agent, timeline: dict, assembly: Any) -> None:
    """A context-length error means the model's window is smaller than the request: remember a
    window below what was sent, so this turn's retry and every later turn fit."""
    attempts = timeline.get("attempts") or []
    model_ref = (attempts[-1] if attempts else {}).get("model_ref") or assembly.request.model_ref
    sent = assembly.manifest["estimated_tokens"] + assembly.manifest["output_reserve"]
    learned = max(1, int(sent * OVERFLOW_TIGHTEN))

    def apply(s: Any) -> None:
        old = s.context.learned_window.get(model_ref)
        s.context.learned_window[model_ref] = min(old, learned) if old else learned
        s.context.window_probe.pop(model_ref, None)  # probing starts over from here

    agent.update_state(apply)


def _calibrate(ts: TurnState, assembly: Any, response: ProviderResponse, timeline: dict) -> None:
    """Note how the estimate compared with the provider's count; settle persists it (once per
    turn, not once per round)."""
    model_ref = timeline.get("winning_model_ref") or assembly.request.model_ref
    actual = response.usage.input_tokens
    manifest = assembly.manifest
    ts.observed.append((model_ref, assembly.raw_estimate, actual))
    ts.last_request = {
        "at": clock.now_iso(),
        "model_ref": model_ref,
        "estimated_tokens": manifest["estimated_tokens"],
        "input_tokens": actual or None,
        "cache_read_input_tokens": response.usage.cache_read_input_tokens or None,
        "context_window": manifest["context_window"],
        "prompt_budget": manifest["prompt_budget"],
        "conversation_items": manifest["conversation_items"],
        "episodes": len(manifest["episodes"]),
    }


def _record_round(
    agent: Agent, ts: TurnState, response: ProviderResponse, timeline: dict, timing: dict
) -> None:
    usage = response.usage.model_dump()
    data = {
        "round_index": len(ts.rounds),
        "text": response.text,
        "tool_calls": [c.model_dump() for c in response.tool_calls],
        "stop_reason": response.stop_reason,
        "model_ref": timeline.get("winning_model_ref"),
        "response_id": response.response_id,
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
        "token_usage": usage,
        "provider_attempt_timeline": timeline,
    }
    entry = agent.transcript(
        "assistant_round", turn_id=ts.turn_id, message_id=ts.message.id, **data
    )
    ts.entries.append(entry)
    ts.rounds.append(data)
    ts.timelines.append(timeline)
    ts.usage = ts.usage + response.usage
    agent.telemetry(
        "provider_round_completed",
        turn_id=ts.turn_id,
        round_index=data["round_index"],
        model_ref=data["model_ref"],
        token_usage=usage,
        provider_attempt_timeline=timeline,
        **timing,
    )
    agent.telemetry(
        "assistant_round_recorded",
        turn_id=ts.turn_id,
        round_index=data["round_index"],
        text_preview=response.text[:200],
        tool_names=[c.name for c in response.tool_calls],
    )


def _run_pending_calls(
    agent: Agent, ts: TurnState, round_index: int, round_data: dict[str, Any]
) -> None:
    for call in round_data.get("tool_calls", []):
        key = call_key(round_index, call["id"])
        if key in ts.results:
            continue
        if key in ts.intents:
            _record_result(agent, ts, key, call, registry.failed(call["name"], INTERRUPTED), 0)
            continue
        intent = {
            "key": key,
            "call_id": call["id"],
            "name": call["name"],
            "arguments": call.get("arguments"),
            "raw_arguments": call.get("raw_arguments"),
            "round_index": round_index,
        }
        agent.transcript("tool_call", turn_id=ts.turn_id, message_id=ts.message.id, **intent)
        ts.intents[key] = intent
        t0 = time.monotonic()
        with groupcommit.suspended():  # the intent is durable before the call can act
            outcome = _call_tool(agent, ts, call, round_data)
        _record_result(agent, ts, key, call, outcome, int((time.monotonic() - t0) * 1000))


def _call_tool(
    agent: Agent, ts: TurnState, call: dict[str, Any], round_data: dict[str, Any]
) -> CallOutcome:
    tool = registry.get(call["name"])
    if tool is not None and tool.mutates and round_data.get("stop_reason") == "max_output_tokens":
        return registry.failed(
            call["name"],
            {
                "kind": "truncated_mutation_tool_call",
                "message": (
                    f"{call['name']} was not run: the model's output hit its token limit, so the "
                    "call may be cut off"
                ),
                "details": {"tool_name": call["name"]},
                "recovery_hint": (
                    "send the call again in a shorter response (for ApplyPatch, split the patch)"
                ),
                "retryable": True,
            },
        )
    ctx = context.tool_context(
        agent,
        turn_id=ts.turn_id,
        call_id=call["id"],
        message_id=ts.message.id,
        round_text=round_data.get("text", ""),
    )
    return registry.call(ctx, call["name"], call.get("arguments"), call.get("raw_arguments"))


def _record_result(
    agent: Agent, ts: TurnState, key: str, call: dict, outcome: CallOutcome, duration_ms: int
) -> None:
    env = outcome.envelope
    stored, refs = storedonce.compact(env, outcome.rendered)  # the output is stored once
    data = {
        "key": key,
        "call_id": call["id"],
        "tool_name": call["name"],
        "status": env["status"],
        "envelope": stored,
        "rendered": outcome.rendered,
        "duration_ms": duration_ms,
    }
    if refs:
        data[storedonce.REFS] = refs
    effects = outcome.effects.to_record() if outcome.effects is not None else None
    if effects:
        data["effects"] = effects  # applied at settle; kept here so a resumed turn applies them too
    entry = agent.transcript("tool_result", turn_id=ts.turn_id, message_id=ts.message.id, **data)
    ts.entries.append(entry)
    ts.results[key] = data
    skills.note_call(agent, ts, call, outcome)  # a command that read a SKILL.md activates it
    event: dict[str, Any] = {
        "turn_id": ts.turn_id,
        "tool_name": call["name"],
        "call_id": call["id"],
        "status": env["status"],
        "duration_ms": duration_ms,
    }
    if env["status"] == "error":
        event["tool_error"] = env["error"]
        event["error"] = outcome.rendered
    agent.telemetry("tool_executed", **event)

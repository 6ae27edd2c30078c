"""Settling a turn: effects, brief, turn terminal, closure, token usage and state — idempotent on
resume."""

from __future__ import annotations

import time
from typing import Any

from holon import clock
from holon.agent import nextdue, timers
from holon.agent.handle import Agent
from holon.context import memoryfiles, progress, window, workingmemory
from holon.errors import UsageError
from holon.model.conversation import ProviderFailure
from holon.model.records import (
    AgentState,
    ContextState,
    FailureArtifact,
    TurnTerminalRecord,
)
from holon.runtime.turn import skills, summaries
from holon.runtime.turn.closure import TurnOutcome, apply_closure, turn_outcome
from holon.runtime.turn.state import TurnResult, TurnState, idle
from holon.runtime.turn.stops import TurnStop
from holon.store import groupcommit
from holon.tools.base import ToolEffects

SLEEP_TIMER_ID = "sleep"
_FAILURE_WHAT = {
    "context_length_exceeded": "the context length was exceeded",
    "budget_exhausted": "a token budget is spent",
    "script_exhausted": "the script has no rounds left",
    "max_rounds_exceeded": "the turn hit its round limit",
}


def failure_artifact(
    failure: ProviderFailure | TurnStop, timeline: dict[str, Any] | None
) -> FailureArtifact:
    attempts = (timeline or {}).get("attempts") or []
    last = attempts[-1] if attempts else {}
    what = _FAILURE_WHAT.get(failure.kind, failure.kind.replace("_", " "))
    model_ref = last.get("model_ref")
    summary = f"turn failed: {what}: {failure.message}"
    if attempts:
        summary = (
            f"provider request failed after {len(attempts)} attempt(s): {what}"
            + (f" ({model_ref})" if model_ref else "")
            + f": {failure.message}"
        )
    chain = failure.diagnostics.get("source_chain") if failure.diagnostics else None
    return FailureArtifact(
        category=failure.category
        if failure.category in ("transport", "protocol", "runtime", "task", "unknown")
        else "unknown",
        summary=summary,
        kind=failure.kind,
        provider=last.get("provider"),
        model_ref=model_ref,
        status=failure.status,
        source_chain=chain,
    )


def settle_success(agent: Agent, ts: TurnState, *, already: bool = False) -> TurnResult:
    """Settle a turn whose model finished. Idempotent: a turn resumed after a crash part way
    through writes only what is missing (its brief once, its terminal once, its state once)."""
    outcome = turn_outcome(agent, ts)
    text = ts.final_text
    if ts.brief is None:
        ts.brief = agent.brief(
            "result",
            outcome.brief_text(text),
            related_message_id=ts.message.id,
            visibility=outcome.visibility,
            turn_id=ts.turn_id,
            work_item_id=outcome.work_item_id,
            record_time=False,
        )
    elif ts.resumed:
        agent.keep_brief(ts.brief)
    if not (already or ts.settled):
        _terminal(agent, ts, "completed")
    if agent.state().last_settled_turn_id != ts.turn_id:
        apply_effects(agent, outcome.effects, model_ref=ts.model_ref)
    delivered = outcome.visibility == "work_done"
    _commit_state(agent, ts, "completed", outcome, outcome.work_item_id, delivered)
    return _result(agent, ts, "completed", outcome.brief_text(text), None)


def settle_failure(
    agent: Agent,
    ts: TurnState,
    failure: ProviderFailure | TurnStop,
    timeline: dict[str, Any] | None,
    *,
    note: str | None = None,
    dead_letter: bool = False,
) -> TurnResult:
    """Settle the turn as failed; `note` (what becomes of its message) follows the summary in the
    failure brief; `dead_letter`: its message is set aside rather than done."""
    artifact = failure_artifact(failure, timeline).model_dump(exclude_none=True)
    usage = ts.usage.model_dump()
    ts.failure = agent.transcript(
        "runtime_failure",
        turn_id=ts.turn_id,
        message_id=ts.message.id,
        summary=artifact["summary"],
        failure_artifact=artifact,
        provider_attempt_timeline=timeline,
        token_usage=usage,
        **({"note": note} if note else {}),
        **({"dead_letter": True} if dead_letter else {}),
    )["data"]
    agent.event(
        "runtime_error",
        turn_id=ts.turn_id,
        message_id=ts.message.id,
        error=artifact["summary"],
        failure_kind=failure.kind,
        failure_artifact=artifact,
        provider_attempt_timeline=timeline,
        token_usage=usage,
    )
    return finish_failure(agent, ts)


def finish_failure(agent: Agent, ts: TurnState) -> TurnResult:
    """The rest of a failed turn's settle, from its runtime_failure record: what a turn resumed
    after a crash in the middle of settling as failed runs, writing only what is missing."""
    data = ts.failure or {}
    artifact = data.get("failure_artifact") or {}
    note = data.get("note")
    summary = artifact.get("summary") or data.get("summary") or "turn failed"
    text = f"{summary}\n\n{note}" if note else summary
    if ts.brief is None:
        ts.brief = agent.brief(
            "failure",
            text,
            related_message_id=ts.message.id,
            turn_id=ts.turn_id,
            record_time=False,
        )
    elif ts.resumed:
        agent.keep_brief(ts.brief)
    if not ts.settled:
        _terminal(agent, ts, "aborted")
    work_item_id = agent.state().bound_work_item_id or agent.state().current_work_item_id
    dead_letter = bool(data.get("dead_letter"))
    _commit_state(agent, ts, "failed", None, work_item_id, False, dead_letter=dead_letter)
    result = _result(agent, ts, "failed", ts.final_text, artifact)
    result.provider_attempt_timeline = (
        data.get("provider_attempt_timeline") or result.provider_attempt_timeline
    )
    result.dead_letter = dead_letter
    if note:
        result.extra["note"] = note
    return result


def apply_effects(agent: Agent, effects: ToolEffects, *, model_ref: str | None = None) -> None:
    """Carry out what the turn's tools asked of the runtime. Idempotent: a resumed settle may repeat
    it. `model_ref`: the turn's carried model, which a Sleep timer's wake message carries too."""
    sleep = effects.sleep
    if sleep is None:
        return
    groupcommit.barrier()  # the results that asked for it are durable before the timer
    try:
        timers.cancel(agent.home, SLEEP_TIMER_ID)  # a new Sleep replaces an earlier timed one
    except UsageError:
        pass
    if sleep.until:
        reason = f" Reason: {sleep.reason}" if sleep.reason else ""
        timer = timers.build(
            agent.home,
            at=clock.parse_iso(sleep.until).timestamp(),
            timer_id=SLEEP_TIMER_ID,
            text=f"Sleep of {sleep.duration_ms} ms ended.{reason}",
            source="sleep",
            model_ref=model_ref,
        )
        nextdue.lower(agent.home, timer["due_ts"])  # before the file: a crash leaves it early
        timers.save(agent.home, timer)


def _terminal(agent: Agent, ts: TurnState, kind: str) -> None:
    duration = int((time.monotonic() - ts.started) * 1000)
    for record in (agent.transcript, agent.event):
        record(
            "turn_terminal",
            turn_id=ts.turn_id,
            message_id=ts.message.id,
            kind=kind,
            duration_ms=duration,
            rounds=len(ts.rounds),
            token_usage=ts.usage.model_dump(),
        )


def _commit_state(
    agent: Agent,
    ts: TurnState,
    outcome: str,
    turn: TurnOutcome | None,
    work_item_id: str | None,
    delivered: bool,
    *,
    dead_letter: bool = False,
) -> None:
    """The settle's one state write, after everything it describes is in the ledgers: the turn out
    of flight, counters, closure, calibration, the brief's time, working memory and the open
    episode (holon.context.progress, whose finalized episodes are appended first), and what the
    agent idle again when a tick ran it (TurnState.running). Idempotent: a resumed settle redoes
    only what is missing."""
    state = agent.state()
    message = ts.entries[0].get("data", {}) if ts.entries else {"text": ts.message.body_text()}
    remembered = {
        "turn_id": ts.turn_id,
        "message_id": ts.message.id,
        "offset": ts.offset,
        "end": agent.transcript_offset(),
        "work_item_id": work_item_id,
        "workspace_id": state.active_workspace_id,
        "outcome": outcome,
    }
    finalized: list[dict[str, Any]] = []

    def apply(s: AgentState) -> None:
        s.inflight.pop(ts.message.id, None)
        if ts.running is not None:
            idle(s)
        if s.last_settled_turn_id != ts.turn_id:
            _count(s, ts, outcome, turn, dead_letter)
        skills.settle_active(s, completed=outcome == "completed")  # turn_active -> session_active
        finalized.extend(
            progress.merge(
                agent,
                s,
                turn={**remembered, "turn_index": s.turn_index},
                message=message,
                rounds=ts.rounds,
                results=ts.results,
                delivered=delivered,
            )
        )

    agent.update_state(apply)
    progress.announce(agent, finalized)
    summaries.run_pending(agent, ts.model_ref, ts.turn_id)  # opt-in: the model's own summaries
    agent.home.mark_memory_dirty()  # transcript lines, maybe an episode


def _count(
    s: AgentState, ts: TurnState, outcome: str, turn: TurnOutcome | None, dead_letter: bool
) -> None:
    """The settled turn in the run state: what the tick finishes a crashed settle from, counters,
    closure, calibration, the brief's time and the working-memory delta this turn was shown."""
    s.last_settled_turn_id = ts.turn_id
    # the tick finishes this message's queue file from these after a crash (tick.recover)
    s.last_settled_message_id = ts.message.id
    s.last_settled_dead_letter = dead_letter
    s.turn_index += 1
    usage = ts.usage
    summary = s.token_usage
    summary.total = summary.total + usage
    summary.total_model_rounds += len(ts.rounds)
    if usage.total_tokens or usage.input_tokens or usage.output_tokens:
        summary.last_turn = usage
    s.total_input_tokens = summary.total.input_tokens
    s.total_output_tokens = summary.total.output_tokens
    s.total_model_rounds = summary.total_model_rounds
    s.total_message_count += 1
    day = clock.now_iso()[:10]
    s.token_usage_by_day = {day: s.token_usage_by_day.get(day, 0) + usage.total_tokens}
    s.last_turn = TurnTerminalRecord(
        turn_index=s.turn_index,
        completed_at=clock.now_iso(),
        duration_ms=int((time.monotonic() - ts.started) * 1000),
        kind="completed" if outcome == "completed" else "aborted",
        last_assistant_message=ts.final_text,
        message_id=ts.message.id,
    )
    apply_closure(s, ts, outcome, turn)
    _context(s.context, ts)
    if ts.brief is not None and ts.brief.get("created_at"):
        s.last_brief_at = max(s.last_brief_at or "", ts.brief["created_at"])
    prompted(s, ts)


def _context(ctx: ContextState, ts: TurnState) -> None:
    """What the turn's requests taught: the calibration, a learned window probed back up
    (holon.context.window), the last request; and the memory files the model has now seen
    (holon.context.memoryfiles)."""
    ctx.calibration = window.calibrated(ctx.calibration, ts.observed)
    ctx.learned_window, ctx.window_probe = window.probed(
        ctx.learned_window, ctx.window_probe, ts.observed
    )
    if ts.last_request is not None:
        ctx.last_request = ts.last_request
    if ctx.memory_basis is None and ts.memory_basis is not None:
        memoryfiles.rebased(ctx, ts.memory_basis)
    shown = next((e for e in ts.entries if e.get("kind") == "turn_context"), None)
    memoryfiles.settled(ctx, shown)


def prompted(s: AgentState, ts: TurnState) -> None:
    """Move working memory's prompted base to what this turn's turn_context showed, carried in
    memory since (holon.runtime.turn.context.record_turn_context); not when memory moved on."""
    wm = s.working_memory
    if ts.prompted_revision is not None and wm.revision == ts.prompted_revision:
        workingmemory.mark_prompted(wm)


def _result(
    agent: Agent, ts: TurnState, status: str, text: str, artifact: dict[str, Any] | None
) -> TurnResult:
    timeline = ts.timelines[-1] if ts.timelines else None
    result = TurnResult(
        agent_id=agent.id,
        message_id=ts.message.id,
        turn_id=ts.turn_id,
        status=status,
        final_text=text,
        token_usage=ts.usage.model_dump(),
        provider_attempt_timeline=timeline,
        failure_artifact=artifact,
        brief=ts.brief,
        rounds=len(ts.rounds),
    )
    result.extra["raw_final_text"] = ts.final_text
    return result

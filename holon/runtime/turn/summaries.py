"""After a settle: the agent's model writes the summaries of the episodes queued for one.

Runs at the end of a turn's settle (never inside its tool loop, never on the idle path), through
the provider runner like a round of the turn, against the turn's model chain. Each call is checked
against the agent's token budgets first and its tokens are counted like a turn's. A failure
(provider error, spent budget, an empty answer, a second crash) keeps the deterministic summary,
names why in an `episode_summary_failed` event and never fails the turn. The records and their
crash safety: holon.context.summaries.
"""

from __future__ import annotations

from typing import Any

from holon import clock
from holon.agent import budget
from holon.agent.handle import Agent
from holon.context import episodes, summaries
from holon.errors import HolonError
from holon.model.conversation import PromptFrame, ProviderRequest, TokenUsage, UserItem
from holon.providers import resolve, runner
from holon.runtime.turn.context import model_chain
from holon.store import crashpoint, jsonl

MAX_PER_SETTLE = 2  # summaries written after one turn; the rest wait for the next settle
MAX_OUTPUT_TOKENS = 600
TIMEOUT_S = 60.0


def run_pending(agent: Agent, model_ref: str | None, turn_id: str) -> None:
    """Write the summaries queued in `context.summaries_pending` (a few a settle) with the model
    chain of the turn just settled (`model_ref`: the model it was run with, if chosen)."""
    pending = list(agent.state().context.summaries_pending)
    if not pending:
        return
    chain = model_chain(agent, model_ref)
    for episode_id in pending[:MAX_PER_SETTLE]:
        try:
            _one(agent, episode_id, chain, turn_id)
        except budget.Exhausted as exc:
            _failed(agent, episode_id, turn_id, "budget", exc.message)
        except (HolonError, OSError, ValueError) as exc:  # a ledger unreadable, a bad setting
            _failed(agent, episode_id, turn_id, "error", str(exc)[:300])


def _one(agent: Agent, episode_id: str, chain: list[str] | None, turn_id: str) -> None:
    rec = _episode(agent, episode_id)
    lines = summaries.lines_for(agent.home, episode_id)
    if rec is None or any(r.get("kind") == "summary" for r in lines):
        _done(agent, episode_id)  # gone from the ledger's tail, or written already
        return
    if sum(r.get("kind") == "attempt" for r in lines) >= summaries.MAX_ATTEMPTS:
        _failed(agent, episode_id, turn_id, "interrupted", "earlier calls did not finish")
        return
    if not chain:
        _failed(agent, episode_id, turn_id, "no_model_configured", "no model is configured")
        return
    budget.check(agent, TokenUsage())
    text = summaries.prompt_input(rec)
    summaries.attempt(agent.home, episode_id, text, chain[0])
    try:
        response, timeline = runner.run_round(_request(chain[0], text), chain, make=_maker(agent))
    except runner.RoundFailed as exc:
        _failed(agent, episode_id, turn_id, exc.failure.kind, exc.failure.message)
        return
    written = summaries.clean(response.text)
    usage = response.usage
    if not written:
        _done(agent, episode_id, usage)
        _failed(agent, episode_id, turn_id, "empty", "the model wrote no summary", drop=False)
        return
    model_ref = str(timeline.get("active_model_ref") or chain[0])
    crashpoint.step("summary.record")
    line = summaries.record(agent.home, rec, text, written, model_ref, usage.model_dump())
    _done(agent, episode_id, usage)
    if line is not None:
        agent.event(
            "episode_summary_recorded",
            episode_id=episode_id,
            turn_id=turn_id,
            model_ref=model_ref,
            input_digest=line["input_digest"],
            token_usage=usage.model_dump(),
        )


def _request(model_ref: str, text: str) -> ProviderRequest:
    return ProviderRequest(
        model_ref=model_ref,
        frame=PromptFrame(system_prompt=summaries.INSTRUCTIONS),
        conversation=[UserItem(text=text)],
        max_output_tokens=MAX_OUTPUT_TOKENS,
        timeout_s=TIMEOUT_S,
    )


def _maker(agent: Agent) -> Any:
    # no continuation: this request is not part of the conversation a transport may continue
    return lambda ref: resolve.make_provider(
        ref, home=agent.home.root, cursor=agent.home.scripted_cursor
    )


def _episode(agent: Agent, episode_id: str) -> dict[str, Any] | None:
    for rec in reversed(jsonl.tail(agent.home.context_episodes, episodes.TAIL_SCAN)):
        if rec.get("id") == episode_id:
            return rec
    return None


def _done(agent: Agent, episode_id: str, usage: TokenUsage | None = None) -> None:
    """Out of the queue, and the call's tokens counted like a turn's (its day and the totals)."""

    def apply(s: Any) -> None:
        s.context.summaries_pending = [e for e in s.context.summaries_pending if e != episode_id]
        if usage is None:
            return
        s.token_usage.total = s.token_usage.total + usage
        s.total_input_tokens = s.token_usage.total.input_tokens
        s.total_output_tokens = s.token_usage.total.output_tokens
        day = clock.now_iso()[:10]
        s.token_usage_by_day = {day: s.token_usage_by_day.get(day, 0) + usage.total_tokens}

    agent.update_state(apply)


def _failed(
    agent: Agent, episode_id: str, turn_id: str, reason: str, message: str, *, drop: bool = True
) -> None:
    """The deterministic summary stays; the event says why no model summary was written."""
    if drop:
        _done(agent, episode_id)
    agent.event(
        "episode_summary_failed",
        episode_id=episode_id,
        turn_id=turn_id,
        reason=reason,
        message=message[:500],
        kept="deterministic",
    )

"""What a failed turn does to its message: defer it through a provider outage, dead-letter it, or
fail the turn.

    retryable (timeout, connection refused or reset, 429, 5xx, overloaded), once the runner's
      in-turn retries are spent         -> defer: back to the queue with a not-before time, the
                                           turn kept in flight (until max_provider_retries)
    permanent (auth, an invalid request such as an unknown model, missing credentials, no model
      configured, an unusable model ref or transport, an unreadable response)
                                         -> dead-letter at once, with a brief saying how to retry
    the prompt does not fit the model's context window (after the loop compacted once)
                                         -> a failed turn
The turn's own stops (round limit, token budget, an exhausted script) are not provider failures:
the loop settles them itself (holon.runtime.turn.stops).

The queue side (the deferral with its backoff, the dead letter) is holon.runtime.turn.fate.
"""

from __future__ import annotations

from typing import Any

from holon.agent.handle import Agent
from holon.model.conversation import ProviderFailure
from holon.runtime.turn import fate
from holon.runtime.turn.settle import failure_artifact, prompted, settle_failure
from holon.runtime.turn.state import TurnResult, TurnState

_WHY = {
    "auth": "the provider refused the credentials for {provider}",
    "missing_credentials": "there is no key for {provider}",
    "client_error": "the provider rejected the request as invalid (an unknown model {model}?)",
    "no_model_configured": "no model is configured for this agent",
    "invalid_response": "the provider's answer could not be read",
}
_FIX = {
    "auth": "check the key for {provider}; `holon provider doctor` shows where it comes from",
    "missing_credentials": "set the key for {provider}; `holon provider doctor` names it",
    "client_error": "check the model ref ({model}) with `holon model show {agent}`",
    "no_model_configured": (
        "pass --model, run `holon model set {agent} provider/model`, or set "
        '`model = "provider/model"` in $HOLON_HOME/config.toml'
    ),
    "invalid_response": "see the provider attempt timeline in `holon events {agent}`",
}
_FIX_DEFAULT = "check the model ref ({model}) and `holon provider doctor`"


def disposition(failure: ProviderFailure) -> str:
    """`defer`, `dead_letter` or `fail` for a turn that ended with `failure`."""
    if failure.kind == "context_length_exceeded":  # the prompt's fault: the message is done
        return "fail"
    return "defer" if failure.retryable else "dead_letter"


def conclude(
    agent: Agent,
    ts: TurnState,
    failure: ProviderFailure,
    timeline: dict[str, Any] | None,
    *,
    can_defer: bool,
    queue_file: str | None,
) -> TurnResult:
    """End the turn for `failure`: deferred (nothing settled, the turn stays in flight), settled
    as failed with its message dead-lettered, or settled as failed. Without a `queue_file` (a turn
    run outside the tick) the turn only fails."""
    outcome = disposition(failure)
    if outcome == "defer" and can_defer and queue_file is not None:
        return _deferred(agent, ts, failure, timeline)
    if outcome == "fail" or queue_file is None:
        return settle_failure(agent, ts, failure, timeline)
    queue = agent.home.queue
    dead = fate.dead_letter_path(agent, queue_file)
    attempts = (timeline or {}).get("attempts") or []
    note = dead_letter_note(
        failure,
        agent_id=agent.id,
        model_ref=(attempts[-1].get("model_ref") if attempts else None) or ts.model_ref,
        kept=str(dead.relative_to(agent.home.root)),
        move=(str(dead), str(queue.new)),
        retries=ts.message.provider_retries,
    )
    return settle_failure(agent, ts, failure, timeline, note=note, dead_letter=True)


def _deferred(
    agent: Agent, ts: TurnState, failure: ProviderFailure, timeline: dict[str, Any] | None
) -> TurnResult:
    """The provider is unavailable: keep the turn in flight; the tick re-queues the message and a
    later attempt resumes the turn where it stopped. Only the working-memory delta its
    turn_context showed is recorded as shown (holon.runtime.turn.settle.prompted)."""
    if ts.prompted_revision is not None:
        agent.update_state(lambda s: prompted(s, ts))
    return TurnResult(
        agent_id=agent.id,
        message_id=ts.message.id,
        turn_id=ts.turn_id,
        status="deferred",
        final_text=ts.final_text,
        token_usage=ts.usage.model_dump(),
        provider_attempt_timeline=timeline,
        failure_artifact=failure_artifact(failure, timeline).model_dump(exclude_none=True),
        rounds=len(ts.rounds),
        retry_after_s=failure.retry_after_s,
        model_ref=ts.model_ref,
    )


def dead_letter_note(
    failure: ProviderFailure,
    *,
    agent_id: str,
    model_ref: str | None,
    kept: str,
    move: tuple[str, str],
    retries: int,
) -> str:
    """What the failure brief adds when the message is set aside: why, and how to run it again
    (`kept`: where it is kept, relative to the agent home; `move`: the absolute paths of the
    dead-letter file and of queue/new)."""
    provider = (model_ref or "").split("/", 1)[0] or "the provider"
    fields = {"provider": provider, "model": model_ref or "?", "agent": agent_id}
    if failure.retryable:
        why = (
            f"The provider stayed unavailable through {retries} deferred retries"
            if retries
            else "The provider was unavailable and deferred retries are off "
            "(runtime.max_provider_retries = 0)"
        )
        fix = "once it answers again"
    else:
        why = "This is not retried: " + _WHY.get(failure.kind, failure.kind.replace("_", " "))
        fix = "after you fix that (" + _FIX.get(failure.kind, _FIX_DEFAULT) + ")"
        why, fix = why.format(**fields), fix.format(**fields)
    return (
        f"{why}. The message is kept in {kept}; to run it again {fix}, move it back: "
        f"`mv {move[0]} {move[1]}/`"
    )

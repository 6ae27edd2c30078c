"""What a failed turn does to its message: defer it through a provider outage, dead-letter it, or
fail the turn.

    retryable (timeout, connection refused or reset, 429, 5xx, overloaded), once the runner's
      in-turn retries are spent         -> defer: back to the queue with a not-before time, the
                                           turn kept in flight (until max_provider_retries)
    permanent (auth, an invalid request such as an unknown model, missing credentials, no model
      configured, an unusable model ref or transport, an unreadable response)
                                         -> dead-letter at once, with a brief saying how to retry
    the turn's own limits (context length, token budget, round limit, an exhausted script)
                                         -> a failed turn, as before

Backoff: `retry_base_s * 2^(n-1)`, capped at `retry_max_s`, times a jitter in [0.5, 1], or the
provider's retry-after when that is longer. Each setting is an environment variable, else a key in
`[runtime]` of config.toml, else the default.
"""

from __future__ import annotations

import math
import os
import random
from typing import Any

from holon import clock, config
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.model.conversation import ProviderFailure
from holon.model.messages import MessageEnvelope
from holon.runtime.turn.settle import failure_artifact, prompted, settle_failure
from holon.runtime.turn.state import TurnResult, TurnState
from holon.store.queue import base_name

DEFAULT_RETRY_BASE_S = 30.0
DEFAULT_RETRY_MAX_S = 3600.0
DEFAULT_MAX_PROVIDER_RETRIES = 8
# failures of the turn itself, not of its provider: the turn fails and its message is done
TURN_FAILURES = frozenset(
    {"context_length_exceeded", "budget_exhausted", "max_rounds_exceeded", "script_exhausted"}
)
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
    if failure.kind in TURN_FAILURES:
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
    dead = queue.dead / base_name(queue_file)
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


def defer(agent: Agent, name: str, message: MessageEnvelope, result: TurnResult) -> dict[str, Any]:
    """Put the claimed message `name` back into the queue, not to be claimed before its backoff
    ends, and return what was decided. The event is logged before the queue changes: a crash in
    between redelivers the message at once, and its turn resumes."""
    retries = message.provider_retries + 1
    delay = backoff_s(retries, result.retry_after_s)
    at = clock.now_ts() + delay
    record = message.model_dump(mode="json")
    record.update(
        provider_retries=retries,
        not_before=clock.iso(at),
        model_ref=result.model_ref or message.model_ref,
    )
    artifact = result.failure_artifact or {}
    deferral = {
        "message_id": message.id,
        "not_before": record["not_before"],
        "provider_retries": retries,
        "max_provider_retries": max_provider_retries(),
        "failure_kind": artifact.get("kind"),
    }
    agent.event(
        "message_deferred",
        **deferral,
        turn_id=result.turn_id,
        delay_s=round(delay, 3),
        retry_after_s=result.retry_after_s,
        summary=artifact.get("summary"),
        provider_attempt_timeline=result.provider_attempt_timeline,
    )
    agent.home.queue.defer(name, record, at)
    return deferral


def deferral_in_progress(record: dict[str, Any]) -> float | None:
    """A record in queue/cur/ whose not-before lies ahead was being deferred when its tick died (a
    claimed message's not-before has always passed): that not-before, else None."""
    text = record.get("not_before")
    if not isinstance(text, str):
        return None
    try:
        at = clock.parse_iso(text).timestamp()
    except ValueError:
        return None
    return at if at > clock.now_ts() else None


def for_dead_letter(message: MessageEnvelope) -> dict[str, Any]:
    """The record kept in queue/dead/: moved back by hand, it gets a new round of retries."""
    record = message.model_dump(mode="json")
    record.update(provider_retries=0, not_before=None)
    return record


def _env_seconds(name: str, dotted: str, default: float) -> float:
    raw = os.environ.get(name)
    value: Any = config.get(dotted, default) if raw is None or not raw.strip() else raw
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds < 0:
        where = name if raw is not None and raw.strip() else f"{dotted} in config.toml"
        raise UsageError(
            f"{where} must be a number of seconds, got {value!r}",
            kind="invalid_config",
            hint=f"set {where} to a number such as {default:g}, or remove it",
        )
    return seconds


def retry_base_s() -> float:
    return _env_seconds("HOLON_RETRY_BASE_S", "runtime.retry_base_s", DEFAULT_RETRY_BASE_S)


def retry_max_s() -> float:
    return _env_seconds("HOLON_RETRY_MAX_S", "runtime.retry_max_s", DEFAULT_RETRY_MAX_S)


def max_provider_retries() -> int:
    return max(
        0,
        config.env_int(
            "HOLON_MAX_PROVIDER_RETRIES",
            "runtime.max_provider_retries",
            DEFAULT_MAX_PROVIDER_RETRIES,
        ),
    )


def check_settings() -> None:
    """Raise invalid_config for a retry setting that is not a number, before any message is
    claimed (a bad setting found after a turn would leave its message in queue/cur/)."""
    retry_base_s(), retry_max_s(), max_provider_retries()


def backoff_s(retry: int, retry_after_s: float | None = None) -> float:
    """Seconds until deferred retry number `retry` (1, 2, ...) may run."""
    delay = min(retry_max_s(), retry_base_s() * 2.0 ** min(max(retry - 1, 0), 60))
    delay *= random.uniform(0.5, 1.0)  # deferred agents do not all return at the same moment
    if retry_after_s is not None and retry_after_s > delay:
        delay = retry_after_s
    return delay


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

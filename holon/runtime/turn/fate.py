"""A claimed message's fate in the queue: claimed, then done, deferred or dead-lettered.

1. claim: the next ready message, validated once into its envelope and its seal checked; one
   that is not a valid envelope, or whose seal admission refuses, is dead-lettered instead
2. its turn runs (holon.runtime.turn.loop); a failed turn concludes in holon.runtime.turn.outage
3. done (the turn settled), deferred (a provider outage: back to queue/new/ with a not-before time
   after a backoff, `provider_retries` + 1), or dead-lettered (a permanent provider failure, or
   `max_provider_retries` spent) into queue/dead/ with an event and, unless the turn's own brief
   said it, a failure brief
4. after a crash (the tick's recover): a message whose turn settled is finished as its settle
   decided; one whose deferral was under way is released at its not-before; any other is
   redelivered with `delivery_attempts` + 1, and dead-lettered at the delivery limit

Backoff: `retry_base_s * 2^(n-1)`, capped at `retry_max_s`, times a jitter in [0.5, 1], or the
provider's retry-after when that is longer. Each setting is an environment variable, else a key in
`[runtime]` of config.toml, else the default.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from holon import clock, config
from holon.agent import seal
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.model.messages import MessageEnvelope
from holon.runtime.turn.state import TurnResult
from holon.store.queue import base_name

DEFAULT_DELIVERY_LIMIT = 3
DEFAULT_RETRY_BASE_S = 30.0
DEFAULT_RETRY_MAX_S = 3600.0
DEFAULT_MAX_PROVIDER_RETRIES = 8


def claim(agent: Agent, dead_lettered: list[str]) -> tuple[str, MessageEnvelope] | None:
    """The next message, validated once into its envelope; one that is not a valid envelope, or
    whose seal is refused, is set aside (its id added to `dead_lettered`)."""
    while True:
        claimed = agent.home.queue.claim()
        if claimed is None:
            return None
        name, record = claimed
        try:
            message = MessageEnvelope.model_validate(record)
        except ValidationError as exc:
            dead_letter(agent, name, record, dead_lettered, reason=not_an_envelope(exc))
            continue
        refused = seal.verify(agent.home, record)  # only admission decides who sent it
        if refused:
            dead_letter(agent, name, record, dead_lettered, reason=refused)
            continue
        return name, message


def not_an_envelope(exc: ValidationError) -> str:
    return f"because it is not a valid message envelope ({exc.errors()[0]['msg']})"


def done(agent: Agent, name: str) -> None:
    agent.home.queue.done(name)


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


def can_defer(message: MessageEnvelope) -> bool:
    """Whether another provider outage may defer the message (else it is dead-lettered)."""
    return message.provider_retries < max_provider_retries()


def failed_for_good(
    agent: Agent, name: str, message: MessageEnvelope, kind: str, dead_lettered: list[str]
) -> None:
    """Set aside a message whose turn settled as failed for a permanent provider failure (or after
    its deferred retries); the turn's failure brief already says why and how to retry."""
    reason = f"because its provider failed for good ({kind})"
    if message.provider_retries:
        reason += f" after {message.provider_retries} deferred retries"
    record = for_dead_letter(message.model_dump(mode="json"))
    dead_letter(agent, name, record, dead_lettered, reason=reason, brief=False)


def finish_settled(
    agent: Agent, name: str, record: dict[str, Any], dead: bool, dead_lettered: list[str]
) -> None:
    """Finish the file of a message whose turn settled before the tick died: done, or set aside
    after a permanent provider failure. Its turn is never run again."""
    if dead:
        reason = "because its provider failed for good"
        dead_letter(agent, name, for_dead_letter(record), dead_lettered, reason=reason, brief=False)
    else:
        done(agent, name)


def for_dead_letter(record: dict[str, Any]) -> dict[str, Any]:
    """The record kept in queue/dead/: moved back by hand, it gets a new round of retries."""
    return {**record, "provider_retries": 0, "not_before": None}


def dead_letter_path(agent: Agent, queue_file: str) -> Path:
    """Where the claimed message `queue_file` is kept once dead-lettered."""
    return agent.home.queue.dead / base_name(queue_file)


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


def finish_deferral(agent: Agent, name: str, record: dict[str, Any], not_before: float) -> None:
    """The tick died deferring it: finish that; no delivery attempt is counted."""
    agent.home.queue.release(name, not_before)
    agent.event("message_deferral_completed", message_id=record["id"])


def redeliver(
    agent: Agent,
    name: str,
    record: dict[str, Any],
    recovered: list[str],
    dead_lettered: list[str],
) -> None:
    """A message left in queue/cur/ by a crashed tick: back to queue/new/ with one more delivery
    attempt counted, or dead-lettered at the delivery limit."""
    record["delivery_attempts"] = int(record.get("delivery_attempts") or 0) + 1
    if record["delivery_attempts"] >= delivery_limit():
        dead_letter(agent, name, record, dead_lettered)
        return
    queue = agent.home.queue
    queue.rewrite_cur(name, record)
    queue.release(name)
    recovered.append(record["id"])
    agent.event(
        "message_redelivered",
        message_id=record["id"],
        delivery_attempts=record["delivery_attempts"],
    )


def dead_letter(
    agent: Agent,
    name: str,
    record: dict[str, Any],
    dead_lettered: list[str],
    reason: str | None = None,
    *,
    brief: bool = True,
) -> str:
    """Set a message aside in queue/dead/ with a failure brief (after too many deliveries, or
    unreadable); without `brief` when its settled turn already wrote one (or the caller writes
    its own). Returns its file name in queue/dead/."""
    message_id = str(record.get("id") or name)
    agent.home.queue.rewrite_cur(name, record)
    name = agent.home.queue.dead_letter(name)
    agent.update_state(lambda s: s.inflight.pop(message_id, None))
    attempts = int(record.get("delivery_attempts") or 0)
    reason = reason or f"after {attempts} delivery attempts that did not finish"
    agent.event(
        "message_dead_lettered",
        message_id=message_id,
        delivery_attempts=attempts,
        queue_file=f"queue/dead/{name}",
        reason=reason,
    )
    dead_lettered.append(message_id)
    if not brief:
        return name
    where = agent.home.queue.dead / name
    agent.brief(
        "failure",
        f"message {message_id} ({record.get('kind')}) was set aside {reason}; it is kept in "
        f"{where.relative_to(agent.home.root)}",
        related_message_id=message_id,
    )
    return name


def delivery_limit() -> int:
    return max(
        1, config.env_int("HOLON_DELIVERY_LIMIT", "runtime.delivery_limit", DEFAULT_DELIVERY_LIMIT)
    )


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

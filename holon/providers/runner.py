"""Retry, fallback and the provider-attempt timeline around one provider round.

Per candidate model: at most 2 retries on timeout, connection failure, 429
(honouring retry-after, capped) and 5xx; fail fast on everything else; then
the next fallback model. `context_length_exceeded` is terminal: no retry, no
fallback. Every attempt is recorded in the timeline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from holon import clock
from holon.model.conversation import (
    Provider,
    ProviderFailure,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
)
from holon.providers.errors import scrub

MAX_RETRIES = 2
MAX_ATTEMPTS = MAX_RETRIES + 1
RETRY_AFTER_CAP_S = 30.0


class RoundFailed(Exception):
    def __init__(self, failure: ProviderFailure, timeline: dict[str, Any]) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.timeline = timeline


def backoff_base_ms() -> int:
    raw = os.environ.get("HOLON_RETRY_BACKOFF_MS")
    try:
        return max(0, int(raw)) if raw else 500
    except ValueError:
        return 500


def _backoff_ms(failure: ProviderFailure, attempt: int) -> int:
    base = backoff_base_ms() * (2 ** (attempt - 1))
    if failure.retry_after_s is not None:
        return int(min(max(failure.retry_after_s, 0.0), RETRY_AFTER_CAP_S) * 1000)
    return base


def run_round(
    request: ProviderRequest,
    chain: list[str],
    *,
    make: Callable[[str], Provider],
    sleep: Callable[[float], None] = time.sleep,
    before_request: Callable[[], None] | None = None,
) -> tuple[ProviderResponse, dict[str, Any]]:
    """Run one provider round over the model chain; returns (response, timeline) or raises
    RoundFailed."""
    attempts: list[dict[str, Any]] = []
    timeline: dict[str, Any] = {"attempts": attempts, "requested_model_ref": chain[0]}
    last: ProviderFailure | None = None
    for index, model_ref in enumerate(chain):
        timeline["active_model_ref"] = model_ref
        provider_id = model_ref.split("/", 1)[0]
        try:
            provider = make(model_ref)
        except ProviderFailure as exc:
            last = exc = scrub(exc)
            attempts.append(
                _record(
                    provider_id,
                    model_ref,
                    1,
                    None,
                    None,
                    exc,
                    "fail_fast_aborted",
                    advanced=index + 1 < len(chain),
                )
            )
            continue
        req = request.model_copy(update={"model_ref": model_ref})
        for attempt in range(1, MAX_ATTEMPTS + 1):
            if before_request is not None:
                before_request()
            started = time.monotonic()
            started_at = clock.now_iso()
            try:
                response = provider.complete(req)
            except ProviderFailure as exc:
                last = exc = scrub(exc, getattr(provider, "base_url", None))
                dur = int((time.monotonic() - started) * 1000)
                if exc.kind == "context_length_exceeded":
                    attempts.append(
                        _record(
                            provider_id,
                            model_ref,
                            attempt,
                            started_at,
                            dur,
                            exc,
                            "fail_fast_aborted",
                            advanced=False,
                        )
                    )
                    raise RoundFailed(exc, _aggregate(timeline)) from None
                if exc.retryable and attempt < MAX_ATTEMPTS:
                    backoff = _backoff_ms(exc, attempt)
                    rec = _record(
                        provider_id,
                        model_ref,
                        attempt,
                        started_at,
                        dur,
                        exc,
                        "retrying",
                        advanced=False,
                    )
                    rec["backoff_ms"] = backoff
                    attempts.append(rec)
                    sleep(backoff / 1000.0)
                    continue
                outcome = "retries_exhausted" if exc.retryable else "fail_fast_aborted"
                attempts.append(
                    _record(
                        provider_id,
                        model_ref,
                        attempt,
                        started_at,
                        dur,
                        exc,
                        outcome,
                        advanced=index + 1 < len(chain),
                    )
                )
                break
            dur = int((time.monotonic() - started) * 1000)
            rec = _record(
                provider_id, model_ref, attempt, started_at, dur, None, "succeeded", advanced=False
            )
            rec["token_usage"] = response.usage.model_dump()
            attempts.append(rec)
            timeline["winning_model_ref"] = model_ref
            return response, _aggregate(timeline)
    assert last is not None
    raise RoundFailed(last, _aggregate(timeline))


def _record(
    provider: str,
    model_ref: str,
    attempt: int,
    started_at: str | None,
    duration_ms: int | None,
    failure: ProviderFailure | None,
    outcome: str,
    *,
    advanced: bool,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "provider": provider,
        "model_ref": model_ref,
        "attempt": attempt,
        "max_attempts": MAX_ATTEMPTS,
        "outcome": outcome,
        "advanced_to_fallback": advanced,
    }
    if started_at is not None:
        rec["started_at"] = started_at
        rec["completed_at"] = clock.now_iso()
    if duration_ms is not None:
        rec["duration_ms"] = duration_ms
    if failure is not None:
        rec["failure_kind"] = failure.kind
        rec["disposition"] = (
            "retry" if outcome == "retrying" else ("fallback" if advanced else "abort")
        )
        if failure.status is not None:
            rec["status"] = failure.status
        diag = {
            "stage": failure.diagnostics.get("stage", "request"),
            "provider": provider,
            "model_ref": model_ref,
            **failure.diagnostics,
        }
        if failure.status is not None:
            diag["status"] = failure.status
        rec["transport_diagnostics"] = diag
    return rec


def _aggregate(timeline: dict[str, Any]) -> dict[str, Any]:
    total = TokenUsage()
    seen = False
    for rec in timeline["attempts"]:
        if "token_usage" in rec:
            total = total + TokenUsage(**rec["token_usage"])
            seen = True
    if seen:
        timeline["aggregated_token_usage"] = total.model_dump()
    return timeline


def model_chain(primary: str, fallbacks: list[str]) -> list[str]:
    chain = [primary]
    for m in fallbacks:
        if m not in chain:
            chain.append(m)
    return chain

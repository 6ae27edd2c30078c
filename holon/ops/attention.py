"""What `holon doctor` says about an agent's operator attention: its last activity, what it waits
on (its operator, a task, a timer, a provider outage with the next retry), the action_required
records nobody has answered yet, and a notify hook that failed; and whether `[notify]` is valid.

Read from the last RECENT events of the ledger through the presentation layer (holon.feed), so
doctor, the feed and the hook say the same thing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from holon import clock
from holon.errors import UsageError
from holon.feed import notify
from holon.feed.present import present
from holon.home.layout import Home
from holon.store import jsonl

Finding = Callable[..., dict[str, Any]]  # holon.ops.doctor.finding, passed in by doctor
RECENT = 500  # events read from the end of the ledger
_WAITS = {
    "awaiting_operator_input": "its operator",
    "awaiting_task_result": "a task result",
    "awaiting_timer": "a timer",
    "awaiting_external_change": "an external change",
}


def notify_finding(finding: Finding) -> list[dict[str, Any]]:
    """The `[notify]` table: none, valid (what runs, for which levels) or invalid."""
    try:
        s = notify.settings()
    except UsageError as exc:
        return [finding("notify", "error", exc.message, exc.hint, kind=exc.kind)]
    if s is None:
        return []
    msg = f"hook {s.command[0]} for {', '.join(s.levels)} (timeout {s.timeout_s:g} s)"
    return [finding("notify", "ok", msg, command=list(s.command), levels=list(s.levels))]


def agent_findings(aid: str, home: Home, state: Any, finding: Finding) -> list[dict[str, Any]]:
    """Last activity, what the agent waits on, unanswered action_required, hook failures."""
    records = [present(e) for e in jsonl.tail(home.events, RECENT)]
    out = []
    own = [r for r in records if r["source_event_kind"] != "notify_hook_failed"]
    if own:
        last = own[-1]
        msg = f"last activity at {last['at']}: {last['summary'] or last['title']}"
        out.append(finding("activity", "ok", msg, at=last["at"]))
    waits = waiting_on(home, state)
    if waits:
        out.append(finding("waiting", "ok", f"waiting on {waits}"))
    asks = unanswered(records)
    if asks:
        latest = asks[-1]
        msg = (
            f"{len(asks)} action_required record(s) with no operator message since; latest at "
            f"{latest['at']}: {latest['summary']}"
        )
        fix = f'holon feed {aid}  # then: holon prompt {aid} "your answer"'
        out.append(finding("action_required", "warn", msg, fix, event_seqs=_seqs(asks)))
    failed = [r for r in records if r["source_event_kind"] == "notify_hook_failed"]
    if failed:
        msg = f"{len(failed)} notify hook failure(s); latest at {failed[-1]['at']}: "
        msg += failed[-1]["summary"]
        fix = "run the [notify] command of config.toml by hand with a record on stdin"
        out.append(finding("notify_hook", "warn", msg, fix, event_seqs=_seqs(failed)))
    return out


def _seqs(records: list[dict[str, Any]]) -> list[int]:
    return [r["event_seq"] for r in records]


def waiting_on(home: Home, state: Any) -> str | None:
    """What the agent waits on, in words; None when it waits on nothing."""
    deferred = home.queue.deferred()
    if deferred:
        retry = clock.iso(min(t for _, t in deferred))
        return f"a provider outage: {len(deferred)} message(s) deferred, next retry at {retry}"
    closure = state.closure or {}
    reason = closure.get("waiting_reason") if closure.get("outcome") == "waiting" else None
    if reason is None and state.status == "asleep" and state.sleeping_until:
        reason = "awaiting_timer"
    if reason is None:
        return None
    said = _WAITS.get(reason, reason)
    if reason == "awaiting_task_result" and state.active_task_ids:
        said += f" ({', '.join(state.active_task_ids)})"
    if reason == "awaiting_timer" and state.sleeping_until:
        said += f" (asleep until {state.sleeping_until})"
    return said


def unanswered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The action_required records after the last operator message admitted."""
    asks: list[dict[str, Any]] = []
    for record in records:
        prov = record["provenance"]
        if (
            record["source_event_kind"] == "message_admitted"
            and prov.get("authority_class") == "operator_instruction"
        ):
            asks = []
        elif record["visibility"] == "action_required":
            asks.append(record)
    return asks

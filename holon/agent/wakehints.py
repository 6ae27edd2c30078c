"""Wake hints: coalesced "something changed" signals in `.holon/wake_hint.json`.

A hint is not a message. Submitting one never runs a turn; the next tick that
finds the agent eligible (not paused or stopped, and not running, since it
holds the turn lock) converts it into one `system_tick`. Hints that arrive
before that coalesce into the same file. A hint with a payload becomes a
contentful tick (model-visible); a plain one is liveness-only unless the prior
closure was waiting for exactly this kind of change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from holon import clock, jsonfile
from holon.agent import admission
from holon.agent.handle import Agent
from holon.home import dueindex
from holon.home.layout import Home
from holon.store import crashpoint
from holon.store.atomic import write_json
from holon.vocab import SCHEMA_VERSION

MAX_KEPT_PAYLOADS = 5
MAX_HINT_BYTES = 4 << 20
HINT_KEYS = frozenset(
    (
        "schema_version",
        "target_agent_id",
        "delivery_mode",
        "deliveries",
        "first_received_at",
        "last_received_at",
        "external_trigger_id",
        "source",
        "correlation_id",
        "payloads",
    )
)


def submit(
    home: Home,
    *,
    trigger_id: str | None,
    source: str | None = None,
    body: str | None = None,
    content_type: str | None = None,
    correlation_id: str | None = None,
) -> dict[str, Any]:
    agent = Agent(home)
    now = clock.now_iso()
    with agent.state_lock():
        hint = read(agent, home.wake_hint) or {
            "schema_version": SCHEMA_VERSION,
            "target_agent_id": home.agent_id,
            "delivery_mode": "wake_hint",
            "deliveries": 0,
            "first_received_at": now,
            "payloads": [],
        }
        hint["deliveries"] = int(hint.get("deliveries", 0)) + 1
        hint["last_received_at"] = now
        hint["external_trigger_id"] = trigger_id
        hint["source"] = source or hint.get("source")
        hint["correlation_id"] = correlation_id or hint.get("correlation_id")
        if body:
            hint["payloads"] = (hint.get("payloads") or [])[-(MAX_KEPT_PAYLOADS - 1) :] + [
                {"received_at": now, "content_type": content_type or "text/plain", "body": body}
            ]
        dueindex.mark(home.root)  # before and after the hint file: early, never late
        write_json(home.wake_hint, hint)
        dueindex.mark(home.root)
        agent.update_state(lambda s: setattr(s, "pending_wake_hint", _summary(hint)))
    agent.event(
        "wake_hint_received",
        external_trigger_id=trigger_id,
        source=source,
        deliveries=hint["deliveries"],
        contentful=bool(body),
    )
    return hint


def read(agent: Agent, path: Path) -> dict[str, Any] | None:
    """The hint in `path` with every field of the right type, None when there is none. A file that
    cannot be read as a hint (not JSON, not an object, a directory, a FIFO) is only a signal that
    something changed: it is renamed to `<name>.corrupt-<time>` with a `wake_hint_set_aside`
    event, and reads as no hint, so the caller starts a new one."""
    try:
        found = jsonfile.object_of(path, MAX_HINT_BYTES)
    except jsonfile.Unreadable as exc:
        stamp = clock.now_iso().replace(":", "").replace("-", "")
        aside = path.with_name(f"{path.name}.corrupt-{stamp}")
        crashpoint.step("wakehint.set_aside")
        os.replace(path, aside)
        where = os.fspath(aside.relative_to(agent.home.root))
        agent.event("wake_hint_set_aside", problem=str(exc), set_aside=where)
        return None
    return None if found is None else _clean(found)


def _clean(hint: dict[str, Any]) -> dict[str, Any]:
    """`hint` with wrong-typed fields dropped or reset (a hand edit, an older writer)."""
    out = {k: v for k, v in hint.items() if k in HINT_KEYS}
    deliveries = out.get("deliveries")
    ok = isinstance(deliveries, int) and not isinstance(deliveries, bool) and deliveries >= 0
    out["deliveries"] = min(deliveries, 2**31) if ok else 0
    for key in HINT_KEYS - {"deliveries", "payloads", "schema_version"}:
        if not isinstance(out.get(key), str | None):
            out[key] = None
    payloads = out.get("payloads") if isinstance(out.get("payloads"), list) else []
    out["payloads"] = [
        {k: str(p.get(k) or "") for k in ("received_at", "content_type", "body")}
        for p in payloads[-MAX_KEPT_PAYLOADS:]
        if isinstance(p, dict) and isinstance(p.get("body"), str)
    ]
    return out


def _summary(hint: dict[str, Any]) -> dict[str, Any]:
    return {
        k: hint.get(k)
        for k in (
            "external_trigger_id",
            "source",
            "deliveries",
            "first_received_at",
            "last_received_at",
        )
    } | {"contentful": bool(hint.get("payloads"))}


def convert(agent: Agent) -> list[str]:
    """Turn the pending hint into one system tick if the agent is eligible; returns what fired.

    The hint file is first renamed aside (under the state lock) so hints arriving meanwhile
    start a new file; a crash before the tick is admitted leaves the renamed file, which the
    next conversion picks up.
    """
    taken = agent.home.wake_hint_converting
    if not os.path.lexists(agent.home.wake_hint) and not os.path.lexists(taken):
        return []
    if agent.state().status.value in ("paused", "stopped"):
        return []
    with agent.state_lock():
        if not os.path.lexists(taken):
            crashpoint.step("wakehint.take")
            os.replace(agent.home.wake_hint, taken)
        agent.update_state(lambda s: setattr(s, "pending_wake_hint", None))
    hint = read(agent, taken) or {}  # one that cannot be read still wakes the agent, plainly
    payloads = hint.get("payloads") or []
    text = _text(hint)
    body = (
        {"type": "text", "text": text}
        if payloads
        else {
            "type": "json",
            "value": {"wake_hint": _summary(hint), "liveness_only": True, "note": text},
        }
    )
    meta = {"wake_hint": _summary(hint), "contentful": bool(payloads)}
    trigger_id = hint.get("external_trigger_id")
    if trigger_id:
        env = admission.admit(
            agent.home,
            "trigger",
            "system_tick",
            body,
            source=hint.get("source"),
            descriptor_id=trigger_id,
            metadata=meta,
            correlation_id=hint.get("correlation_id"),
        )
    else:
        env = admission.admit(
            agent.home, "runtime", "system_tick", body, source="wake_hint", metadata=meta
        )
    crashpoint.step("wakehint.done")
    try:
        os.unlink(taken)
    except FileNotFoundError:  # set aside by read()
        pass
    agent.event(
        "wake_hint_converted",
        message_id=env["id"],
        deliveries=hint.get("deliveries"),
        contentful=bool(payloads),
    )
    return [env["id"]]


def _text(hint: dict[str, Any]) -> str:
    n = hint.get("deliveries", 1)
    head = (
        f"External trigger {hint.get('external_trigger_id') or ''} fired {n} time(s) "
        f"(last at {hint.get('last_received_at')})"
    ).replace("  ", " ")
    if hint.get("source"):
        head += f", source {hint['source']}"
    parts = [
        head + ". Inspect the external system it stands for; this wake does not clear any blocker."
    ]
    for p in hint.get("payloads") or []:
        parts.append(
            f"--- payload ({p.get('content_type')}, received {p.get('received_at')}) "
            f"---\n{p['body']}"
        )
    return "\n".join(parts)

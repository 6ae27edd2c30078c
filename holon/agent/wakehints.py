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
from typing import Any

from holon import clock
from holon.agent import admission
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.store.atomic import read_json, write_json

MAX_KEPT_PAYLOADS = 5


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
        hint = read_json(home.wake_hint) or {
            "schema_version": 1,
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
        write_json(home.wake_hint, hint)
        agent.update_state(lambda s: setattr(s, "pending_wake_hint", _summary(hint)))
    agent.event(
        "wake_hint_received",
        external_trigger_id=trigger_id,
        source=source,
        deliveries=hint["deliveries"],
        contentful=bool(body),
    )
    return hint


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
    if not agent.home.wake_hint.exists() and not taken.exists():
        return []
    if agent.state().status.value in ("paused", "stopped"):
        return []
    with agent.state_lock():
        if not taken.exists():
            os.replace(agent.home.wake_hint, taken)
        agent.update_state(lambda s: setattr(s, "pending_wake_hint", None))
    hint = read_json(taken) or {}
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
    os.unlink(taken)
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

"""`holon queue`: an agent's messages as the operator sees them (waiting, in progress, dead
letters), and the two repairs: a dead letter queued again (`retry`), a message removed (`drop`).
Each repair is logged as an event before the files change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home.layout import Home
from holon.store.queue import Queue


def listing(home: Home, dead: bool = False) -> list[dict[str, Any]]:
    """One row per message file: state, message id, kind, priority, attempts, preview, file."""
    q = home.queue
    places = [("dead", q.dead, q.dead_letters())] if dead else []
    places = places or [("pending", q.new, q.pending()), ("in_progress", q.cur, q.in_progress())]
    rows = []
    for state, folder, names in places:
        for name in names:
            record = Queue._load(folder / name) or {}
            body = record.get("body") or {}
            text = body.get("text") if body.get("type") == "text" else body.get("value")
            rows.append(
                {
                    "state": state if record else f"{state}_unreadable",
                    "message_id": record.get("id"),
                    "kind": record.get("kind"),
                    "priority": record.get("priority"),
                    "delivery_attempts": record.get("delivery_attempts"),
                    "preview": _preview(text),
                    "file": name,
                }
            )
    return rows


def retry(home: Home, message_id: str) -> dict[str, Any]:
    """Queue dead letter `message_id` again, its delivery attempts reset."""
    name, record = _find(home, home.queue.dead, home.queue.dead_letters(), message_id, "dead")
    agent = Agent(home)
    agent.event("queue_retried", message_id=message_id, file=name)
    record["delivery_attempts"] = 0
    home.queue.put(record, record.get("priority") or "normal")
    (home.queue.dead / name).unlink(missing_ok=True)
    return {"message_id": message_id, "retried": True}


def drop(home: Home, message_id: str) -> dict[str, Any]:
    """Remove waiting or dead message `message_id` (one a tick holds is left to it)."""
    q = home.queue
    for folder, names, state in (
        (q.new, q.pending(), "pending"),
        (q.dead, q.dead_letters(), "dead"),
    ):
        found = _match(folder, names, message_id)
        if found is not None:
            Agent(home).event("queue_dropped", message_id=message_id, file=found, state=state)
            try:
                (folder / found).unlink()
            except FileNotFoundError:  # a tick claimed it meanwhile
                raise UsageError(
                    f"message {message_id} was just claimed by a tick",
                    kind="message_busy",
                    hint="let the turn run, or `holon pause` the agent first",
                ) from None
            return {"message_id": message_id, "dropped": True, "state": state}
    raise _unknown(home, message_id, "pending or dead")


def _find(home: Home, folder: Path, names: list[str], message_id: str, where: str):
    name = _match(folder, names, message_id)
    record = Queue._load(folder / name) if name is not None else None
    if record is None:
        raise _unknown(home, message_id, where)
    return name, record


def _match(folder: Path, names: list[str], message_id: str) -> str | None:
    for name in names:
        if name == message_id or (Queue._load(folder / name) or {}).get("id") == message_id:
            return name
    return None


def _unknown(home: Home, message_id: str, where: str) -> UsageError:
    return UsageError(
        f"no {where} message {message_id} in agent {home.agent_id}",
        kind="unknown_message",
        hint=f"`holon queue list {home.agent_id}` (add --dead for dead letters) shows the ids",
    )


def _preview(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""External trigger capability: one active descriptor per agent, token stored only as a hash.

Descriptor: `Home.trigger_descriptor` (`triggers/default.json`, mode 0600). Lookup index:
`$HOLON_HOME/trigger_index.json` maps a prefix of each token hash to the agent
home, so `holon trigger deliver` finds its agent without reading every
agent's state. The token itself is printed once by `rotate` and never stored,
logged or echoed in errors.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from holon import clock
from holon.agent import wakehints
from holon.agent.handle import Agent
from holon.errors import HolonError, NotRunnable, OperationFailed, UsageError
from holon.home import relocate, settings
from holon.home.layout import Home, corrupt, read_record
from holon.ids import new_id
from holon.paths import holon_home
from holon.safetext import one_line
from holon.store.atomic import write_json
from holon.store.locks import locked
from holon.vocab import SCHEMA_VERSION

TOKEN_PREFIX = "htr_"
INDEX_PREFIX_CHARS = 16
MAX_BODY_BYTES = 64 * 1024
MAX_CONTENT_TYPE_CHARS = 100
DESCRIPTOR_HINT = (
    "revoke and mint a new token: `holon trigger rotate AGENT` rewrites the descriptor "
    "(move the broken file aside first)"
)
INDEX_HINT = (
    "move the file aside and run `holon trigger rotate AGENT` for each agent whose trigger "
    "should work: rotating rebuilds its entry"
)


class TriggerRefused(HolonError):
    kind = "trigger_refused"
    exit_code = 2


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def index_path():
    return holon_home() / "trigger_index.json"


def _descriptor(home: Home) -> dict[str, Any] | None:
    """The descriptor, None when there is none; one that is not a JSON object is corrupt_state."""
    data = read_record(home.trigger_descriptor, DESCRIPTOR_HINT)
    if data is None or isinstance(data, dict):
        return data
    raise corrupt(home.trigger_descriptor, "is not a JSON object", DESCRIPTOR_HINT)


def _entries() -> dict[str, str]:
    """The index's token-hash prefix -> agent home map; a corrupt index is corrupt_state."""
    index = read_record(index_path(), INDEX_HINT) or {}
    entries = index.get("entries", {}) if isinstance(index, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise corrupt(index_path(), "is not a trigger index", INDEX_HINT)
    return entries


def _count(data: dict[str, Any]) -> int:
    value = data.get("trigger_count", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def show(home: Home) -> dict[str, Any] | None:
    data = _descriptor(home)
    if not data:
        return None
    return public(data)


def public(data: dict[str, Any]) -> dict[str, Any]:
    """The descriptor without its token hash."""
    return {k: v for k, v in data.items() if k != "token_sha256"}


def _lock(home: Home):
    """The trigger lock: every read-modify-write of the descriptor re-reads it under this lock,
    so a delivery never writes back a descriptor that a rotate or revoke replaced."""
    home.locks.mkdir(parents=True, exist_ok=True)
    return locked(home.trigger_lock)


def rotate(home: Home) -> tuple[dict[str, Any], str]:
    """Mint a new token (revoking any previous one); returns (descriptor, token)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    digest = _hash(token)
    with _lock(home):
        try:
            old = _descriptor(home) or {}
        except OperationFailed:  # a broken descriptor is replaced: rotating is its repair
            old = {}
        now = clock.now_iso()
        data = {
            "schema_version": SCHEMA_VERSION,
            "external_trigger_id": old.get("external_trigger_id") or new_id("trg"),
            "target_agent_id": home.agent_id,
            "delivery_mode": "wake_hint",
            "status": "active",
            "token_sha256": digest,
            "created_at": old.get("created_at") or now,
            "rotated_at": now,
            "revoked_at": None,
            "trigger_count": _count(old),
            "last_triggered_at": old.get("last_triggered_at"),
        }
        home.triggers.mkdir(parents=True, exist_ok=True)
        write_json(home.trigger_descriptor, data, mode=0o600)
        old_digest = old.get("token_sha256")
        _reindex(home, old_digest if isinstance(old_digest, str) else None, digest)
    Agent(home).event("external_trigger_rotated", external_trigger_id=data["external_trigger_id"])
    return public(data), token


def revoke(home: Home) -> dict[str, Any]:
    with _lock(home):
        data = _descriptor(home)
        if not data:
            raise UsageError(
                f"agent {home.agent_id} has no external trigger",
                kind="no_trigger",
                hint=f"create one with `holon trigger rotate {home.agent_id}`",
            )
        if data.get("status") == "revoked":
            return public(data)
        data.update(status="revoked", revoked_at=clock.now_iso())
        write_json(home.trigger_descriptor, data, mode=0o600)
        digest = data.get("token_sha256")
        _reindex(home, digest if isinstance(digest, str) else None, None)
    Agent(home).event(
        "external_trigger_revoked", external_trigger_id=data.get("external_trigger_id")
    )
    return public(data)


def _reindex(home: Home, old_digest: str | None, new_digest: str | None) -> None:
    base = holon_home()
    base.mkdir(parents=True, exist_ok=True)
    with locked(base / ".trigger_index.lock"):
        entries = _entries()
        if old_digest:
            entries.pop(old_digest[:INDEX_PREFIX_CHARS], None)
        if new_digest:
            entries[new_digest[:INDEX_PREFIX_CHARS]] = relocate.stored(home.root)
        write_json(index_path(), {"schema_version": SCHEMA_VERSION, "entries": entries}, mode=0o600)


def _refuse() -> TriggerRefused:
    return TriggerRefused(
        "unknown or revoked trigger token",
        kind="unknown_trigger",
        hint="ask the agent's operator for its current token (`holon trigger rotate AGENT`)",
    )


def _check_body(body: str | None) -> None:
    if body is not None and len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise UsageError(
            f"trigger body is larger than {MAX_BODY_BYTES} bytes",
            kind="oversize_body",
            hint="send a short notice; put large payloads where the agent can fetch them",
        )


def _home_of(digest: str) -> Home:
    root = _entries().get(digest[:INDEX_PREFIX_CHARS])
    home = Home(holon_home() / root) if root else None  # relative: inside HOLON_HOME
    if home is None or not home.exists():
        raise _refuse()
    return home


def deliver(
    token: str,
    *,
    body: str | None = None,
    source: str | None = None,
    content_type: str | None = None,
) -> dict[str, Any]:
    """Validate `token` and submit a wake hint to its agent. The check, the count and the hint
    happen under the trigger lock: once `revoke` or `rotate` returns, the old token delivers
    nothing more. `source` and `content_type` become one bounded line each (the model sees them)."""
    _check_body(body)
    source = one_line(source) if source else None
    content_type = one_line(content_type, MAX_CONTENT_TYPE_CHARS) if content_type else None
    digest = _hash(token.strip())
    home = _home_of(digest)
    with _lock(home):
        data = _descriptor(home) or {}
        stored = data.get("token_sha256")
        stored = stored if isinstance(stored, str) else ""
        if (
            not hmac.compare_digest(stored.encode(), digest.encode())
            or data.get("status") != "active"
        ):
            raise _refuse()
        state = settings.lenient(home)
        if state.get("status") == "stopped":
            raise NotRunnable(
                f"agent {home.agent_id} is stopped and does not accept trigger deliveries",
                kind="agent_stopped",
                hint=f"its operator must run `holon resume {home.agent_id}`",
            )
        data["trigger_count"] = _count(data) + 1
        data["last_triggered_at"] = clock.now_iso()
        write_json(home.trigger_descriptor, data, mode=0o600)
        hint = wakehints.submit(
            home,
            trigger_id=data.get("external_trigger_id"),
            source=source,
            body=body or None,
            content_type=content_type,
        )
    Agent(home).event(
        "external_trigger_delivered",
        external_trigger_id=data.get("external_trigger_id"),
        target_agent_id=home.agent_id,
        effective_delivery_mode="wake_hint",
        source=source,
        trigger_count=data["trigger_count"],
        body_bytes=len((body or "").encode("utf-8")),
    )
    return {
        "agent_id": home.agent_id,
        "external_trigger_id": data.get("external_trigger_id"),
        "delivery_mode": "wake_hint",
        "trigger_count": data["trigger_count"],
        "pending_deliveries": hint["deliveries"],
    }

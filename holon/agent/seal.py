"""Admission seals: an HMAC-SHA256 over the fields admission alone decides, so a queue file that
admission did not write is never trusted for its provenance.

Admission (holon.agent.admission) seals each record before it is logged and queued, with a
per-home key in `Home.admission_key` (32 random bytes as hex, mode 0600, made on first use under
the state lock). The tick calls `verify` at claim and sets aside, never runs, a message whose seal
is missing or wrong. The seal covers provenance and content (`SEALED`); the fields the runtime
rewrites while a message waits (delivery_attempts, provider_retries, not_before, model_ref after a
fallback) stay outside it, so a redelivered or deferred message still verifies.

Where the key is safe: the agent's sandboxed commands see `.holon/` read-only, and in a mount
namespace the key itself is masked (`/dev/null` bound over it, holon.sandbox.confine), as are the
keys of the agents above a private child; every other agent's key is hidden with the rest of
$HOLON_HOME (a private child's siblings with their parent's `children/`). The mask holds the
file the key was when the command started, so the key is made before any command starts
(holon.tasks.command.command) and never replaced while valid. Without a mount namespace
(Landlock alone grants reads everywhere) a command can read the key but still cannot write into
the queue.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any

from holon import jsonfile
from holon.home import migrate
from holon.home.layout import Home
from holon.store.atomic import fsync_dir, stage_bytes, write_bytes

ALGORITHM = "hmac-sha256"
KEY_BYTES = 32
SEALED = (
    "schema_version",
    "id",
    "agent_id",
    "created_at",
    "kind",
    "origin",
    "trust",
    "authority_class",
    "priority",
    "trigger_kind",
    "work_item_id",
    "task_id",
    "source_refs",
    "body",
    "metadata",
    "delivery_surface",
    "admission_context",
    "correlation_id",
    "causation_id",
)


class NoKey(Exception):
    """The home has no usable admission key (missing, unreadable or malformed)."""


def _read_key(home: Home) -> bytes:
    try:
        data = jsonfile.read_bytes(home.admission_key, limit=4096)
    except ValueError as exc:
        raise NoKey(str(exc)) from None
    if data is None:
        raise NoKey("is missing")
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise NoKey("is not hex") from None
    if len(key) < KEY_BYTES:
        raise NoKey("is too short")
    return key


def ensure_key(home: Home) -> bytes:
    """The home's key, made when there is none (by exclusive link: two makers at once agree on
    one key). A malformed key is replaced: call under the agent's state lock for that."""
    try:
        return _read_key(home)
    except NoKey:
        if os.path.lexists(home.admission_key) and not os.path.isfile(home.admission_key):
            raise
    data = (os.urandom(KEY_BYTES).hex() + "\n").encode()
    if os.path.lexists(home.admission_key):
        write_bytes(home.admission_key, data, mode=0o600)
        return _read_key(home)
    tmp = stage_bytes(home.admission_key, data, mode=0o600)
    try:
        os.link(tmp, home.admission_key)
    except FileExistsError:  # made by another process meanwhile: theirs is the key
        pass
    finally:
        os.unlink(tmp)
    fsync_dir(home.admission_key.parent)
    return _read_key(home)


def canonical(record: dict[str, Any]) -> bytes:
    """The sealed fields of `record` as canonical JSON (sorted keys, ASCII, no spaces)."""
    fields = {name: record.get(name) for name in SEALED}
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _mac(key: bytes, record: dict[str, Any]) -> str:
    return f"{ALGORITHM}:{hmac.new(key, canonical(record), hashlib.sha256).hexdigest()}"


def seal(home: Home, record: dict[str, Any]) -> str:
    """The seal of an admitted `record` (makes the key on first use: call under the state
    lock)."""
    return _mac(ensure_key(home), record)


def verify(home: Home, record: dict[str, Any]) -> str | None:
    """None when admission sealed `record` with this home's key; else why it must not run, as a
    phrase that follows "set aside" ("because it was not admitted: ...")."""
    found = record.get("seal")
    if not isinstance(found, str) or not found:
        if record.get("id") in migrate.legacy_ids(home):
            return None  # queued by a holon from before seals, and recorded at the upgrade
        return "because it was not admitted: it carries no admission seal"
    try:
        key = _read_key(home)
    except NoKey as exc:
        return f"because it was not admitted: the home's admission key {exc}"
    try:
        expected = _mac(key, record)
    except (RecursionError, TypeError, ValueError):  # nested too deep to be an admitted body
        return "because it was not admitted: its fields cannot be sealed"
    if not hmac.compare_digest(found.encode("utf-8", "replace"), expected.encode()):
        return (
            "because it was not admitted: its admission seal does not match "
            "(provenance or content changed after admission, or another home's key)"
        )
    return None

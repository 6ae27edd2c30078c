"""Canonical tool result envelope, head-and-tail previews, artifacts, and the error receipt."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from holon.store.atomic import write_bytes

ERROR_DETAILS_BUDGET = 2000


def success(tool_name: str, summary_text: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"tool_name": tool_name, "status": "success", "summary_text": summary_text,
            "result": result, "error": None}


def failure(tool_name: str, error: dict[str, Any]) -> dict[str, Any]:
    return {"tool_name": tool_name, "status": "error", "summary_text": error["message"],
            "result": None, "error": error}


def head_tail(text: str, budget_chars: int) -> tuple[str, bool]:
    """A preview of `text` within `budget_chars`: first and last lines with an explicit cut marker."""
    if len(text) <= budget_chars:
        return text, False
    lines = text.splitlines(keepends=True)
    half = max(1, budget_chars // 2)
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > half:
            break
        head.append(line)
        used += len(line)
    tail: list[str] = []
    used = 0
    for line in reversed(lines[len(head):]):
        if used + len(line) > half:
            break
        tail.append(line)
        used += len(line)
    tail.reverse()
    if not head and not tail:  # one enormous line: cut by characters
        head_text, tail_text = text[:half], text[-half:]
        marker = f"\n...\n[output truncated: showing first {half} and last {half} characters]\n...\n"
        return head_text + marker + tail_text, True
    body_head = "".join(head)
    if body_head and not body_head.endswith("\n"):
        body_head += "\n"
    marker = f"...\n[output truncated: showing first {len(head)} and last {len(tail)} lines]\n...\n"
    return body_head + marker + "".join(tail), True


def write_artifact(artifacts_dir: Path, stem: str, data: bytes | str) -> str:
    """Persist a full payload and return its absolute path (the path-only artifact reference)."""
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = artifacts_dir / f"{stem}-{secrets.token_hex(4)}.log"
    write_bytes(path, data)
    return os.fspath(path)


def bound_details(details: Any) -> Any:
    """Oversized error details become a preview plus a digest instead of the full payload."""
    if details is None:
        return None
    text = json.dumps(details, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= ERROR_DETAILS_BUDGET:
        return details
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return {"preview": text[: ERROR_DETAILS_BUDGET - 200], "truncated": True, "sha256_16": digest,
            "bytes": len(text.encode("utf-8"))}


def render_error(envelope: dict[str, Any]) -> str:
    """The spec's bounded JSON error receipt."""
    err = envelope["error"] or {}
    receipt: dict[str, Any] = {"ok": False, "tool_name": envelope.get("tool_name"),
                               "kind": err.get("kind"), "message": err.get("message")}
    if err.get("recovery_hint"):
        receipt["hint"] = err["recovery_hint"]
    details = err.get("details")
    if isinstance(details, dict) and "field" in details:
        receipt["field"] = details["field"]
    receipt["retryable"] = bool(err.get("retryable"))
    if details:
        receipt["details"] = bound_details(details)
    return json.dumps(receipt, ensure_ascii=False, indent=1)


def pretty_if_json(text: str) -> str:
    """Command output that is JSON is shown as readable JSON, never as an escaped string."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"

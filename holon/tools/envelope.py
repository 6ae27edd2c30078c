"""The canonical tool result envelope and the bounded error receipt.

See docs/specs/rfc-tool-result-envelope.md.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ERROR_DETAILS_BUDGET = 2000


def success(tool_name: str, summary_text: str, result: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_name": tool_name,
        "status": "success",
        "summary_text": summary_text,
        "result": result,
        "error": None,
    }


def failure(tool_name: str, error: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_name": tool_name,
        "status": "error",
        "summary_text": error["message"],
        "result": None,
        "error": error,
    }


def bound_details(details: Any) -> Any:
    """Oversized error details become a preview plus a digest instead of the full payload."""
    if details is None:
        return None
    text = json.dumps(details, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= ERROR_DETAILS_BUDGET:
        return details
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return {
        "preview": text[: ERROR_DETAILS_BUDGET - 200],
        "truncated": True,
        "sha256_16": digest,
        "bytes": len(text.encode("utf-8")),
    }


def render_error(envelope: dict[str, Any]) -> str:
    """The spec's bounded JSON error receipt."""
    err = envelope["error"] or {}
    receipt: dict[str, Any] = {
        "ok": False,
        "tool_name": envelope.get("tool_name"),
        "kind": err.get("kind"),
        "message": err.get("message"),
    }
    if err.get("recovery_hint"):
        receipt["hint"] = err["recovery_hint"]
    details = err.get("details")
    if isinstance(details, dict) and "field" in details:
        receipt["field"] = details["field"]
    receipt["retryable"] = bool(err.get("retryable"))
    if details:
        receipt["details"] = bound_details(details)
    return json.dumps(receipt, ensure_ascii=False, indent=1)

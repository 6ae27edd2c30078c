"""The canonical envelope: success/failure shapes, bounded error details, the JSON error receipt."""

from __future__ import annotations

import hashlib
import json

from holon.tools import envelope, registry
from holon.tools.base import ToolFailure


def test_success_and_failure_shapes():
    ok = envelope.success("T", "did it", {"n": 1})
    assert ok == {
        "tool_name": "T",
        "status": "success",
        "summary_text": "did it",
        "result": {"n": 1},
        "error": None,
    }
    err = ToolFailure("boom", "it broke", details={"a": 1}, recovery_hint="retry", retryable=True)
    bad = envelope.failure("T", err.to_error())
    assert bad["status"] == "error" and bad["result"] is None
    assert bad["summary_text"] == "it broke"
    assert bad["error"] == {
        "kind": "boom",
        "message": "it broke",
        "details": {"a": 1},
        "recovery_hint": "retry",
        "retryable": True,
    }


def test_bound_details_passes_small_payloads_through():
    assert envelope.bound_details(None) is None
    small = {"field": "x", "values": list(range(10))}
    assert envelope.bound_details(small) is small


def test_bound_details_replaces_oversized_payloads_with_preview_and_digest():
    big = {"blob": "é" * 3000, "z": 1}
    bounded = envelope.bound_details(big)
    text = json.dumps(big, ensure_ascii=False, sort_keys=True, default=str)
    assert bounded["truncated"] is True
    assert bounded["preview"] == text[: envelope.ERROR_DETAILS_BUDGET - 200]
    assert bounded["sha256_16"] == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert bounded["bytes"] == len(text.encode("utf-8")) > len(text)  # bytes, not characters
    assert len(json.dumps(bounded, ensure_ascii=False)) < envelope.ERROR_DETAILS_BUDGET


def test_bound_details_at_exactly_the_budget_is_kept():
    pad = envelope.ERROR_DETAILS_BUDGET - len(json.dumps({"k": ""}))
    exact = {"k": "x" * pad}
    assert len(json.dumps(exact)) == envelope.ERROR_DETAILS_BUDGET
    assert envelope.bound_details(exact) is exact
    assert envelope.bound_details({"k": "x" * (pad + 1)})["truncated"] is True


def test_render_error_full_receipt():
    env = envelope.failure(
        "ExecCommand",
        {
            "kind": "execution_root_violation",
            "message": "outside",
            "recovery_hint": "stay inside",
            "details": {"field": "workdir", "workdir": "/x"},
            "retryable": False,
        },
    )
    receipt = json.loads(envelope.render_error(env))
    assert list(receipt) == [
        "ok",
        "tool_name",
        "kind",
        "message",
        "hint",
        "field",
        "retryable",
        "details",
    ]
    assert receipt["ok"] is False and receipt["field"] == "workdir"
    assert receipt["details"] == {"field": "workdir", "workdir": "/x"}


def test_render_error_minimal_receipt_omits_empty_parts():
    env = envelope.failure(
        "X", {"kind": "k", "message": "m", "details": {}, "recovery_hint": None, "retryable": None}
    )
    receipt = json.loads(envelope.render_error(env))
    assert receipt == {
        "ok": False,
        "tool_name": "X",
        "kind": "k",
        "message": "m",
        "retryable": False,
    }


def test_render_error_bounds_large_details():
    env = envelope.failure(
        "X", {"kind": "k", "message": "m", "details": {"field": "f", "huge": "y" * 10000}}
    )
    text = envelope.render_error(env)
    receipt = json.loads(text)
    assert receipt["field"] == "f" and receipt["details"]["truncated"] is True
    assert len(text) < 4000


def test_registry_failed_builds_envelope_and_receipt():
    outcome = registry.failed(
        "Nope",
        {
            "kind": "unknown_tool",
            "message": "no tool named 'Nope'",
            "details": None,
            "recovery_hint": "pick one",
            "retryable": False,
        },
    )
    assert outcome.envelope["status"] == "error" and outcome.effects is None
    assert json.loads(outcome.rendered)["hint"] == "pick one"
    assert outcome.rendered == envelope.render_error(outcome.envelope)

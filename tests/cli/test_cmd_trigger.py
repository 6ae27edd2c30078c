"""`holon trigger show|rotate|revoke|deliver`: the token is printed once and never stored; refused
deliveries (unknown, revoked, oversize, stopped agent) change nothing."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok, ok_json

from holon.agent import control
from holon.cli.trigger import trigger_cmd

DESCRIPTOR_KEYS = {
    "schema_version",
    "external_trigger_id",
    "target_agent_id",
    "delivery_mode",
    "status",
    "created_at",
    "rotated_at",
    "revoked_at",
    "trigger_count",
    "last_triggered_at",
}


def descriptor(agent) -> dict:
    return json.loads(agent.trigger_descriptor.read_text())


@pytest.fixture
def token(agent) -> str:
    return ok_json(trigger_cmd, "rotate", "a", "--json")["token"]


def test_show_without_a_trigger(agent):
    out = ok(trigger_cmd, "show", "a").stdout
    assert out == "a has no external trigger; create one with `holon trigger rotate a`\n"
    fails("trigger", "revoke", "a", code=2, kind="no_trigger")
    assert not agent.trigger_descriptor.exists()


def test_rotate_prints_the_token_once_and_stores_only_its_hash(agent):
    doc = ok_json(trigger_cmd, "rotate", "a", "--json")
    assert set(doc) == DESCRIPTOR_KEYS | {"token"}
    assert doc["token"].startswith("htr_") and doc["status"] == "active"
    assert doc["target_agent_id"] == "a" and doc["delivery_mode"] == "wake_hint"
    stored = agent.trigger_descriptor.read_text()
    assert doc["token"] not in stored and "token_sha256" in stored
    assert (agent.trigger_descriptor.stat().st_mode & 0o777) == 0o600
    shown = ok_json(trigger_cmd, "show", "a")
    assert set(shown) == DESCRIPTOR_KEYS  # neither the token nor its hash
    result = ok(trigger_cmd, "rotate", "a")
    assert result.stdout.strip().startswith("htr_") and result.stdout.strip() != doc["token"]
    assert "shown once" in result.stderr
    assert descriptor(agent)["external_trigger_id"] == doc["external_trigger_id"]


def test_deliver_with_a_body(agent, token):
    doc = ok_json(
        trigger_cmd,
        "deliver",
        token,
        "--source",
        "ci",
        "--content-type",
        "text/plain",
        "--json",
        input="build finished\n",
    )
    assert doc == {
        "agent_id": "a",
        "external_trigger_id": descriptor(agent)["external_trigger_id"],
        "delivery_mode": "wake_hint",
        "trigger_count": 1,
        "pending_deliveries": 1,
    }
    out = ok(trigger_cmd, "deliver", f"  {token}\n").stdout  # surrounding whitespace is ignored
    assert out == "delivered to a (wake hint, 2 pending)\n"
    assert descriptor(agent)["trigger_count"] == 2


def test_old_and_revoked_tokens_are_refused(agent, token):
    new = ok_json(trigger_cmd, "rotate", "a", "--json")["token"]
    _, err = fails("trigger", "deliver", token, code=2, kind="unknown_trigger")
    assert token not in err
    assert ok(trigger_cmd, "revoke", "a").stdout.startswith("revoked trg_")
    assert descriptor(agent)["status"] == "revoked"
    fails("trigger", "deliver", new, code=2, kind="unknown_trigger")
    fails("trigger", "deliver", "htr_made_up", code=2, kind="unknown_trigger")
    assert descriptor(agent)["trigger_count"] == 0


def test_stopped_agent_refuses_delivery_with_exit_3(agent, token):
    control.stop(agent)
    fails("trigger", "deliver", token, code=3, kind="agent_stopped")
    assert descriptor(agent)["trigger_count"] == 0


def test_oversize_body_is_refused(agent, token):
    from holon.agent.triggers import MAX_BODY_BYTES

    fails(
        "trigger", "deliver", token, code=2, kind="oversize_body", stdin="x" * (MAX_BODY_BYTES + 1)
    )
    assert descriptor(agent)["trigger_count"] == 0


def test_unknown_agent():
    for sub in ("show", "rotate", "revoke"):
        fails("trigger", sub, "nobody", code=2, kind="unknown_agent")

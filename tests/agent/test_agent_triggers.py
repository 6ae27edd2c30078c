"""holon.agent.triggers: a token printed once, stored only as a hash; delivery makes a wake hint."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from holon.agent import control, triggers
from holon.errors import NotRunnable, UsageError
from holon.paths import holon_home
from holon.store import jsonl
from holon.store.atomic import read_json, write_json


def _all_bytes(root) -> bytes:
    out = b""
    for dirpath, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                out += fh.read()
    return out


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_rotate_stores_only_the_hash(agent):
    public, token = triggers.rotate(agent)
    assert token.startswith("htr_") and len(token) > 40
    assert "token_sha256" not in public and "token" not in public
    assert public["status"] == "active" and public["target_agent_id"] == "a"
    assert public["external_trigger_id"].startswith("trg_")
    stored = read_json(agent.trigger_descriptor)
    assert stored["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert _mode(agent.trigger_descriptor) == 0o600
    index = read_json(triggers.index_path())
    assert index["entries"] == {stored["token_sha256"][:16]: "agents/a"}  # relative: relocatable
    assert _mode(triggers.index_path()) == 0o600
    assert token.encode() not in _all_bytes(holon_home())  # never stored or logged anywhere
    assert [e["kind"] for e in jsonl.read(agent.events)] == ["external_trigger_rotated"]
    assert triggers.show(agent) == public


def test_show_without_trigger(agent):
    assert triggers.show(agent) is None


def test_deliver_with_the_right_token(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "1800000000")
    public, token = triggers.rotate(agent)
    out = triggers.deliver(
        f"  {token}\n", body="build failed", source="ci", content_type="text/plain"
    )
    assert out == {
        "agent_id": "a",
        "external_trigger_id": public["external_trigger_id"],
        "delivery_mode": "wake_hint",
        "trigger_count": 1,
        "pending_deliveries": 1,
    }
    hint = read_json(agent.wake_hint)
    assert hint["external_trigger_id"] == public["external_trigger_id"] and hint["source"] == "ci"
    assert hint["payloads"][0]["body"] == "build failed"
    stored = read_json(agent.trigger_descriptor)
    assert (
        stored["trigger_count"] == 1 and stored["last_triggered_at"] == "2027-01-15T08:00:00.000Z"
    )
    assert _mode(agent.trigger_descriptor) == 0o600
    (event,) = [
        e["data"] for e in jsonl.read(agent.events) if e["kind"] == "external_trigger_delivered"
    ]
    assert event["trigger_count"] == 1 and event["body_bytes"] == len("build failed")
    assert agent.queue.pending() == []  # a hint is not a message
    assert triggers.deliver(token)["pending_deliveries"] == 2


def test_wrong_token_is_refused_without_echo(agent):
    triggers.rotate(agent)
    wrong = "htr_" + "x" * 43
    with pytest.raises(triggers.TriggerRefused) as err:
        triggers.deliver(wrong)
    assert err.value.kind == "unknown_trigger" and err.value.exit_code == 2
    assert wrong not in err.value.message and wrong not in (err.value.hint or "")
    assert not agent.wake_hint.exists()


def test_index_hit_with_a_different_hash_is_refused(agent):
    triggers.rotate(agent)
    forged = "htr_forged"
    digest = hashlib.sha256(forged.encode()).hexdigest()
    index = read_json(triggers.index_path())
    index["entries"][digest[:16]] = str(agent.root)  # the index only narrows the search
    write_json(triggers.index_path(), index)
    with pytest.raises(triggers.TriggerRefused):
        triggers.deliver(forged)
    assert read_json(agent.trigger_descriptor)["trigger_count"] == 0


def test_rotate_revokes_the_old_token(agent):
    first, old = triggers.rotate(agent)
    triggers.deliver(old)
    second, new = triggers.rotate(agent)
    assert new != old
    assert second["external_trigger_id"] == first["external_trigger_id"]
    assert second["created_at"] == first["created_at"] and second["trigger_count"] == 1
    with pytest.raises(triggers.TriggerRefused):
        triggers.deliver(old)
    assert triggers.deliver(new)["trigger_count"] == 2
    assert len(read_json(triggers.index_path())["entries"]) == 1


def test_revoke(agent):
    _, token = triggers.rotate(agent)
    public = triggers.revoke(agent)
    assert public["status"] == "revoked" and public["revoked_at"]
    assert "token_sha256" not in public
    assert read_json(triggers.index_path())["entries"] == {}
    with pytest.raises(triggers.TriggerRefused):
        triggers.deliver(token)
    again = triggers.revoke(agent)  # idempotent: no second event
    assert again["revoked_at"] == public["revoked_at"]
    kinds = [e["kind"] for e in jsonl.read(agent.events)]
    assert kinds.count("external_trigger_revoked") == 1


def test_revoked_descriptor_refuses_even_if_indexed(agent):
    _, token = triggers.rotate(agent)
    index = read_json(triggers.index_path())
    triggers.revoke(agent)
    write_json(triggers.index_path(), index)  # a stale index entry
    with pytest.raises(triggers.TriggerRefused):
        triggers.deliver(token)


def test_revoke_without_trigger(agent):
    with pytest.raises(UsageError) as err:
        triggers.revoke(agent)
    assert err.value.kind == "no_trigger" and "holon trigger rotate a" in err.value.hint


def test_stopped_agent_refuses_delivery(agent):
    _, token = triggers.rotate(agent)
    control.stop(agent)
    with pytest.raises(NotRunnable) as err:
        triggers.deliver(token)
    assert err.value.kind == "agent_stopped" and err.value.exit_code == 3
    assert read_json(agent.trigger_descriptor)["trigger_count"] == 0
    assert not agent.wake_hint.exists()


def test_oversize_body(agent):
    _, token = triggers.rotate(agent)
    with pytest.raises(UsageError) as err:
        triggers.deliver(token, body="x" * (triggers.MAX_BODY_BYTES + 1))
    assert err.value.kind == "oversize_body"
    triggers.deliver(token, body="x" * triggers.MAX_BODY_BYTES)


def test_cli_rotate_prints_the_token_once_and_deliver(agent):
    from helpers import run

    proc = run("trigger", "rotate", "a")
    assert proc.returncode == 0, proc.stderr
    token = proc.stdout.strip()
    assert token.startswith("htr_") and "\n" not in token
    assert "shown once" in proc.stderr and token not in proc.stderr
    shown = run("trigger", "show", "a")
    assert (
        shown.returncode == 0 and token not in shown.stdout and "token_sha256" not in shown.stdout
    )
    ok = run("trigger", "deliver", token, "--source", "cron", input="payload")
    assert ok.returncode == 0, ok.stderr
    assert "delivered to a" in ok.stdout
    assert read_json(agent.wake_hint)["payloads"][0]["body"] == "payload"
    bad = run("trigger", "deliver", "htr_nope", input="")
    assert bad.returncode == 2 and "unknown_trigger" in bad.stderr
    assert run("stop", "a").returncode == 0
    stopped = run("trigger", "deliver", token, input="")
    assert stopped.returncode == 3 and "agent_stopped" in stopped.stderr

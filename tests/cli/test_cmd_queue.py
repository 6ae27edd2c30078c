"""`holon queue list|retry|drop` through the real entry point: the waiting messages and dead
letters, a dead letter queued again, a message dropped, each repair in the events."""

from __future__ import annotations

import json

from helpers import run

from holon.cli.queue import queue_group


def _enqueue(text: str) -> str:
    r = run("enqueue", "a", "--kind", "channel_event", "--text", text)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_list_retry_and_drop(agent):
    assert queue_group.name == "queue"
    assert run("queue", "list", "a").stdout == "no messages waiting\n"
    first, second = _enqueue("first message"), _enqueue("second")
    name, _ = agent.queue.claim()
    agent.queue.dead_letter(name)  # as a tick does past the delivery limit
    dead = json.loads(run("queue", "list", "a", "--dead", "--json").stdout)
    assert [(d["message_id"], d["state"]) for d in dead] == [(first, "dead")]
    (line,) = run("queue", "list", "a").stdout.splitlines()
    assert line.startswith(f"{second}  pending") and line.endswith("second")
    r = run("queue", "retry", "a", first)
    assert (r.returncode, r.stdout) == (0, f"queued {first} again\n"), r.stderr
    assert agent.queue.dead_letters() == []
    waiting = json.loads(run("queue", "list", "a", "--json").stdout)
    assert sorted(w["message_id"] for w in waiting) == sorted([first, second])
    assert {w["delivery_attempts"] for w in waiting} == {0}
    assert run("queue", "drop", "a", second).stdout == f"dropped pending message {second}\n"
    assert [m["id"] for m in agent.queue.peek_all()] == [first]
    events = [json.loads(x)["kind"] for x in agent.events.read_text().splitlines()]
    assert "queue_retried" in events and "queue_dropped" in events


def test_an_unknown_id_is_an_error_with_a_hint(agent):
    for verb in ("retry", "drop"):
        r = run("queue", verb, "a", "msg_nosuch")
        assert r.returncode == 2 and r.stderr.startswith("holon: unknown_message: "), r.stderr
        assert "hint: `holon queue list a`" in r.stderr

"""`holon enqueue AGENT --jsonl -` through the real entry point: one message per line, each
admitted and sealed as a single enqueue is, one result line per input line, a bad line refused
with its number while the rest are admitted."""

from __future__ import annotations

import json

from helpers import run

LINES = [
    {"kind": "channel_event", "text": "one", "source": "chat", "sender": "ann"},
    "not json",
    {"text": "no kind and no --kind"},
    {"kind": "webhook_event", "json": {"x": 1}, "source": "gh", "event_type": "push"},
    {"kind": "channel_event", "text": "x", "bogus": 1},
    {"kind": "channel_event", "text": "last", "priority": "next"},
]


def _stdin(lines) -> str:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines) + "\n"


def test_each_line_is_admitted_or_refused_with_its_number(agent):
    r = run("enqueue", "a", "--jsonl", "-", input=_stdin(LINES))
    assert r.returncode == 2, r.stderr
    results = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["line"] for x in results] == [1, 2, 3, 4, 5, 6]
    admitted = [x["id"] for x in results if "id" in x]
    assert [x["line"] for x in results if "id" in x] == [1, 4, 6]
    assert [x["error"]["kind"] for x in results if "error" in x] == [
        "invalid_json",
        "invalid_message_kind",
        "invalid_input",
    ]
    assert [ln.split(": ")[2] for ln in r.stderr.splitlines() if ln.startswith("holon: ")] == [
        "line 2",
        "line 3",
        "line 5",
    ]
    queued = {m["id"]: m for m in agent.queue.peek_all()}
    assert sorted(queued) == sorted(admitted)
    assert queued[admitted[1]]["body"] == {"type": "json", "value": {"x": 1}}
    assert queued[admitted[2]]["priority"] == "next"
    # admitted as a single enqueue is: the same provenance and seal
    one = run("enqueue", "a", "--kind", "channel_event", "--text", "one", "--source", "chat",
              "--sender", "ann", "--json")  # fmt: skip
    single = json.loads(one.stdout)
    batch = queued[admitted[0]]
    for key in ("kind", "origin", "trust", "authority_class", "delivery_surface"):
        assert batch.get(key) == single.get(key), key
    assert set(batch) == set(single) and batch["seal"].startswith("hmac-sha256:")


def test_the_command_lines_options_are_the_lines_defaults(agent):
    lines = [{"text": "a"}, {"text": "b", "kind": "webhook_event"}]
    r = run("enqueue", "a", "--jsonl", "-", "--kind", "channel_event", "--source", "s",
            input=_stdin(lines))  # fmt: skip
    assert (r.returncode, r.stderr) == (0, "")
    kinds = sorted((m["kind"], m["origin"]) for m in agent.queue.peek_all())
    assert kinds == [
        ("channel_event", {"kind": "channel", "channel_id": "s", "sender_id": None}),
        ("webhook_event", {"kind": "webhook", "source": "s", "event_type": None}),
    ]


def test_a_body_option_with_jsonl_is_a_usage_error(agent):
    r = run("enqueue", "a", "--jsonl", "-", "--text", "x", input=_stdin([{"text": "y"}]))
    assert r.returncode == 2 and r.stderr.startswith("holon: invalid_body: ")
    assert agent.queue.peek_all() == []

"""Retention through the real CLI: tool outputs stored once, ledgers rotated into segments that
every reader follows, a crash during rotation, and `holon gc`."""

from __future__ import annotations

import json

from helpers import holon, init_agent, write_script

from holon.context import history
from holon.store import jsonl, segments

OUT = 20_000
MARK = "ZEPHYR-42"
CMD = f"echo {MARK}; printf '%*s' {OUT} '' | tr ' ' x; echo"


def _exec_turn(i: int) -> list[dict]:
    call = {"id": f"c{i}", "name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
    return [{"text": "", "tool_calls": [call]}, {"text": f"turn {i} done"}]


def _ledger(home):
    return home / ".holon" / "ledger" / "transcript.jsonl"


def _size(home) -> int:
    return jsonl.end_offset(_ledger(home))


def _jsonl(*args) -> list[dict]:
    return [json.loads(x) for x in holon(*args).stdout.splitlines()]


def test_outputs_stored_once_and_readers_follow_segments(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLON_RETENTION_LEDGER_SEGMENT_BYTES", "30000")
    home = init_agent()
    rounds = [{"text": "short answer"}] + [r for i in range(3) for r in _exec_turn(i)]
    model = write_script(tmp_path / "s.jsonl", rounds)
    before = _size(home)
    holon("prompt", "a", "say something", "--model", model)
    short = _size(home) - before
    grown = []
    for i in range(3):
        before = _size(home)
        holon("prompt", "a", f"run it {i}", "--model", model)
        grown.append(_size(home) - before)
    # the output is in the transcript once (it was twice: the envelope and the receipt)
    assert max(grown) - short < 1.3 * OUT, (short, grown)
    assert len(segments.segments(_ledger(home))) >= 2  # rotated: every reader below follows

    entries = _jsonl("transcript", "a", "--jsonl")
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    results = [e for e in entries if e["kind"] == "tool_result"]
    assert len(results) == 3
    for r in results:  # --jsonl shows the whole envelope, as the tool returned it
        out = r["data"]["envelope"]["result"]["stdout_preview"]
        assert (
            out.startswith(MARK) and out.count("x") == OUT and out in r["data"]["rendered"] + "\n"
        )
        assert "envelope_refs" not in r["data"]
    assert _jsonl("transcript", "a", "--jsonl", "--tail", "5") == entries[-5:]
    text = holon("transcript", "a").stdout
    assert text.count(MARK) >= 3  # the receipt shown as the model saw it

    # the context replays every tool result as the model saw it, across segments
    turns = history.read_turns(_ledger(home), 0)
    shown = [
        i.content
        for t in turns
        for i in history.items_from(t.entries)
        if getattr(i, "call_id", "").startswith("c")
    ]
    assert len(shown) == 3 and all(MARK in c and c.count("x") >= OUT for c in shown)

    events = _jsonl("events", "a", "--jsonl")
    seqs = [e["event_seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert [e["event_seq"] for e in _jsonl("events", "a", "--jsonl", "--since-seq", "5")] == seqs[
        5:
    ]

    found = json.loads(holon("memory", "search", "a", MARK, "--json", "--limit", "20").stdout)
    hits = [r for r in found["results"] if r["kind"] == "tool_execution"]
    assert len(hits) == 3  # indexed from every segment, each once
    holon("prompt", "a", "again", "--model", write_script(tmp_path / "t.jsonl", _exec_turn(9)))
    found = json.loads(holon("memory", "search", "a", MARK, "--json", "--limit", "20").stdout)
    assert len([r for r in found["results"] if r["kind"] == "tool_execution"]) == 4
    doctor = holon("doctor", "a", "--json", check=False)
    assert "ledger" not in doctor.stdout.lower() or doctor.returncode == 0, doctor.stdout


def test_a_crash_during_rotation_in_a_turn_loses_and_duplicates_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLON_RETENTION_LEDGER_SEGMENT_BYTES", "4000")
    home = init_agent()
    model = write_script(tmp_path / "s.jsonl", [r for i in range(6) for r in _exec_turn(i)])
    for at in (1, 2):
        monkeypatch.setenv("HOLON_CRASH_AT", f"jsonl.rotate:{at}")
        crashed = holon("prompt", "a", f"crash {at}", "--model", model, check=False)
        monkeypatch.delenv("HOLON_CRASH_AT")
        assert crashed.returncode != 0
        holon("tick", "a", "--until-idle", "--model", model)
    holon("prompt", "a", "after", "--model", model)
    entries = _jsonl("transcript", "a", "--jsonl")
    assert len({e["id"] for e in entries}) == len(entries)
    briefs = _jsonl("briefs", "a", "--jsonl")
    messages = [e for e in entries if e["kind"] == "message" and not e["data"].get("continued")]
    assert len(messages) == 3
    by_message = [b["related_message_id"] for b in briefs if b["kind"] != "ack"]
    assert sorted(by_message) == sorted({m["message_id"] for m in messages})
    assert len(segments.segments(_ledger(home))) >= 2
    assert jsonl.scan(_ledger(home))[1:] == (0, False)

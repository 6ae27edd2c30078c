"""Atomic files, JSONL ledgers (torn tails, garbage, tail from the end) and the maildir queue."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from holon.store import jsonl
from holon.store.atomic import read_json, write_bytes, write_json
from holon.store.queue import Queue


def test_atomic_write_replaces_and_keeps_mode(tmp_path):
    p = tmp_path / "f"
    write_bytes(p, b"one")
    os.chmod(p, 0o755)
    write_bytes(p, b"two")
    assert p.read_bytes() == b"two"
    assert os.stat(p).st_mode & 0o777 == 0o755
    assert [x.name for x in tmp_path.iterdir()] == ["f"]  # no tmp leftovers


def test_write_json_roundtrip(tmp_path):
    write_json(tmp_path / "s.json", {"a": "é", "n": 1})
    assert read_json(tmp_path / "s.json") == {"a": "é", "n": 1}
    assert read_json(tmp_path / "missing.json", {}) == {}


def test_torn_last_line_is_skipped_then_repaired(tmp_path):
    p = tmp_path / "l.jsonl"
    jsonl.append(p, {"n": 1})
    with open(p, "ab") as fh:
        fh.write(b'{"n": 2, "torn')
    assert [r["n"] for r in jsonl.read(p)] == [1]
    assert jsonl.scan(p) == (1, 0, True)
    jsonl.append(p, {"n": 3})
    assert [r["n"] for r in jsonl.read(p)] == [1, 3]
    assert jsonl.scan(p) == (2, 0, False)


def test_garbage_lines_are_skipped_and_repair_moves_them_aside(tmp_path):
    p = tmp_path / "l.jsonl"
    p.write_bytes(b'{"n": 1}\nnot json\n\xff\xfe\n[1, 2]\n{"n": 2}\n')
    assert [r["n"] for r in jsonl.read(p)] == [1, 2]
    assert jsonl.tail(p, 5) == [{"n": 1}, {"n": 2}]
    assert jsonl.repair(p) == 3
    assert p.read_bytes() == b'{"n": 1}\n{"n": 2}\n'
    assert (tmp_path / "l.jsonl.rejects").read_bytes().count(b"\n") == 3


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=60), st.integers(min_value=0, max_value=70))
def test_tail_matches_read(tmp_path_factory, texts, n):
    p = tmp_path_factory.mktemp("t") / "l.jsonl"
    jsonl.append_many(p, [{"t": t} for t in texts], fsync=False)
    with open(p, "ab") as fh:
        fh.write(b'{"torn": ')
    everything = list(jsonl.read(p))
    assert jsonl.tail(p, n) == (everything[-n:] if n else [])


def test_tail_reads_across_blocks(tmp_path):
    p = tmp_path / "big.jsonl"
    jsonl.append_many(p, [{"i": i, "pad": "x" * 500} for i in range(1000)], fsync=False)
    assert [r["i"] for r in jsonl.tail(p, 3)] == [997, 998, 999]
    assert len(jsonl.tail(p, 400)) == 400


def test_read_from_offset_returns_only_complete_lines(tmp_path):
    p = tmp_path / "l.jsonl"
    jsonl.append(p, {"a": 1})
    off = p.stat().st_size
    jsonl.append(p, {"a": 2})
    with open(p, "ab") as fh:
        fh.write(b'{"a": 3')
    records, end = jsonl.read_from(p, off)
    assert records == [{"a": 2}]
    assert end == off + len(b'{"a":2}\n')


def test_queue_orders_by_band_then_admission(tmp_path):
    q = Queue(tmp_path / "q")
    q.ensure()
    q.put({"id": "n1"}, "normal")
    q.put({"id": "b1"}, "background")
    q.put({"id": "i1"}, "interject")
    q.put({"id": "n2"}, "normal")
    q.put({"id": "x1"}, "next")
    order = []
    while (c := q.claim()) is not None:
        order.append(c[1]["id"])
        q.done(c[0])
    assert order == ["i1", "x1", "n1", "n2", "b1"]
    assert q.depth() == 0


def test_claim_release_keeps_place_in_line(tmp_path):
    q = Queue(tmp_path / "q")
    q.ensure()
    q.put({"id": "first"}, "normal")
    q.put({"id": "second"}, "normal")
    name, rec = q.claim()
    assert rec["id"] == "first" and q.in_progress() == [name]
    q.release(name)
    assert q.claim()[1]["id"] == "first"


def test_unreadable_queue_file_is_quarantined(tmp_path):
    q = Queue(tmp_path / "q")
    q.ensure()
    (q.new / "0-00000000000000000001-1-aaaa.json").write_bytes(b"{garbage")
    q.put({"id": "ok"}, "normal")
    assert q.claim()[1]["id"] == "ok"
    assert any(n.endswith(".unreadable") for n in q.dead_letters())


def test_queue_put_is_durable_json(tmp_path):
    q = Queue(tmp_path / "q")
    q.ensure()
    name = q.put({"id": "é"}, "normal")
    assert json.loads((q.new / name).read_text()) == {"id": "é"}
    assert os.listdir(q.tmp) == []

"""The queue's deferred messages: a not-before time in the file name, skipped by claim until then,
in their place in line afterwards."""

from __future__ import annotations

import json

from holon.store import queue as queue_module
from holon.store.queue import Queue, base_name, deferred_name, not_before_of

T0 = 1_800_000_000.0


def _queue(tmp_path) -> Queue:
    q = Queue(tmp_path / "q")
    q.ensure()
    return q


def test_the_name_carries_the_not_before_and_keeps_its_base():
    name = "2-00000000000000000042-7-beef0001.json"
    assert not_before_of(name) is None and base_name(name) == name
    later = deferred_name(name, T0 + 30.0004)
    assert later == "2-00000000000000000042-7-beef0001@1800000030001.json"  # rounded up, in ms
    assert not_before_of(later) == 1_800_000_030.001 and base_name(later) == name
    assert deferred_name(later, T0) == "2-00000000000000000042-7-beef0001@1800000000000.json"
    assert not_before_of("2-1-7-beef@soon.json") is None  # not a time: an ordinary name


def test_claim_skips_a_deferred_message_until_its_time_and_keeps_priority(tmp_path):
    q = _queue(tmp_path)
    first = q.put({"id": "m1"}, "normal")
    q.put({"id": "m2"}, "normal")
    name, record = q.claim(now=T0)
    assert (name, record["id"]) == (first, "m1")
    deferred = q.defer(name, {**record, "provider_retries": 1}, T0 + 60)
    assert q.in_progress() == [] and not_before_of(deferred) == T0 + 60
    assert q.deferred(now=T0) == [(deferred, T0 + 60)] and q.next_not_before() == T0 + 60
    assert q.has_ready(now=T0)
    _, second = q.claim(now=T0)  # the message behind it runs meanwhile
    assert second["id"] == "m2"
    assert q.claim(now=T0 + 59) is None and not q.has_ready(now=T0 + 59)
    q.put({"id": "m3"}, "normal")  # admitted later: behind the deferred one once it is due
    name, again = q.claim(now=T0 + 60)
    assert (again["id"], again["provider_retries"]) == ("m1", 1) and name == deferred
    assert q.deferred(now=T0 + 60) == []


def test_release_and_dead_letter_drop_the_not_before(tmp_path):
    q = _queue(tmp_path)
    put = q.put({"id": "m1"}, "background")
    name, _ = q.claim(now=T0)
    deferred = q.defer(name, {"id": "m1"}, T0 + 5)
    name, _ = q.claim(now=T0 + 5)
    assert name == deferred
    assert q.release(name) == put  # a crashed turn is redelivered at once
    name, _ = q.claim(now=T0 + 5)
    assert q.dead_letter(name) == put and q.dead_letters() == [put]


def test_a_crash_between_rewrite_and_rename_leaves_the_rewritten_record_in_cur(
    tmp_path, monkeypatch
):
    q = _queue(tmp_path)
    q.put({"id": "m1"}, "normal")
    name, record = q.claim(now=T0)

    def die(*_args):
        raise SystemExit("killed between the rewrite and the rename")

    monkeypatch.setattr(queue_module.os, "rename", die)
    try:
        q.defer(name, {**record, "not_before": "2027-01-15T08:00:30.000Z"}, T0 + 30)
    except SystemExit:
        pass
    monkeypatch.undo()
    assert q.pending() == [] and q.in_progress() == [name]
    assert json.loads((q.cur / name).read_text())["not_before"] == "2027-01-15T08:00:30.000Z"

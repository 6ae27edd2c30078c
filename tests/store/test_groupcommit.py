"""Group commit: inside a group a durable append is written at once and fsynced at the next
barrier, once per file; a state write, a queue move and a rotation are barriers; outside a group
and while suspended every durable append is fsynced by itself."""

from __future__ import annotations

import os

import pytest

from holon.store import atomic, groupcommit, jsonl
from holon.store.queue import Queue


@pytest.fixture
def synced(monkeypatch):
    """The names of the files fsynced, in order (a directory's name too)."""
    seen: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        seen.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_outside_a_group_every_durable_append_is_fsynced(tmp_path, synced):
    for i in range(3):
        jsonl.append(tmp_path / "t.jsonl", {"i": i})
    jsonl.append(tmp_path / "t.jsonl", {"telemetry": True}, fsync=False)
    assert synced == ["t.jsonl"] * 3


def test_a_group_fsyncs_each_file_once_at_its_barrier(tmp_path, synced):
    with groupcommit.group():
        for i in range(3):
            jsonl.append(tmp_path / "t.jsonl", {"i": i})
            jsonl.append(tmp_path / "e.jsonl", {"i": i})
        assert synced == []
        assert groupcommit.unsynced() == {
            str(tmp_path / "t.jsonl"): 0,
            str(tmp_path / "e.jsonl"): 0,
        }
        groupcommit.barrier()
        assert sorted(synced) == ["e.jsonl", "t.jsonl"]
        jsonl.append(tmp_path / "t.jsonl", {"i": 3})
    assert sorted(synced) == ["e.jsonl", "t.jsonl", "t.jsonl"]  # the end of the group
    assert groupcommit.unsynced() == {}
    assert [r["i"] for r in jsonl.read(tmp_path / "t.jsonl")] == [0, 1, 2, 3]


def test_a_state_write_makes_the_appends_before_it_durable_first(tmp_path, synced):
    with groupcommit.group():
        jsonl.append(tmp_path / "t.jsonl", {"i": 0})
        atomic.write_json(tmp_path / "state.json", {"offset": 1})
        assert synced[0] == "t.jsonl"  # log, then change: before the state's own fsyncs
        assert synced[1].startswith(".state.json.tmp.") and synced[2] == tmp_path.name
        atomic.write_json(tmp_path / "cache.json", {}, durable=False)
        assert len(synced) == 3  # a cache is neither a barrier nor fsynced


def test_a_queue_move_is_a_barrier(tmp_path, synced):
    queue = Queue(tmp_path / "q")
    queue.ensure()
    queue.put({"id": "m"}, "normal")
    synced.clear()
    with groupcommit.group():
        jsonl.append(tmp_path / "t.jsonl", {"done": "m"})
        queue.claim()
        assert synced == ["t.jsonl", "cur"]


def test_while_suspended_appends_are_fsynced_one_by_one(tmp_path, synced):
    with groupcommit.group():
        jsonl.append(tmp_path / "t.jsonl", {"intent": 1})
        with groupcommit.suspended():
            assert synced == ["t.jsonl"]  # what was deferred is durable before the tool runs
            jsonl.append(tmp_path / "tool.jsonl", {"i": 1})
            jsonl.append(tmp_path / "tool.jsonl", {"i": 2})
            assert synced == ["t.jsonl", "tool.jsonl", "tool.jsonl"]
        jsonl.append(tmp_path / "t.jsonl", {"result": 1})
        assert len(synced) == 3


def test_a_rotation_syncs_the_deferred_bytes_before_the_rename(tmp_path, synced, monkeypatch):
    monkeypatch.setenv("HOLON_HOME", str(tmp_path))
    ledger = tmp_path / "transcript.jsonl"
    monkeypatch.setattr(
        "holon.store.segments.config.retention",
        lambda key: 10 if key == "ledger_segment_bytes" else None,
    )
    with groupcommit.group():
        jsonl.append(ledger, {"text": "longer than ten bytes"})
        assert synced[0] == "transcript.jsonl"  # the file, before it became a segment
        assert groupcommit.unsynced() == {}
    assert [r["text"] for r in jsonl.read(ledger)] == ["longer than ten bytes"]


def test_a_group_left_by_an_error_still_syncs_what_it_deferred(tmp_path, synced):
    with pytest.raises(KeyError), groupcommit.group():
        jsonl.append(tmp_path / "t.jsonl", {"i": 0})
        raise KeyError("the turn failed")
    assert synced == ["t.jsonl"] and groupcommit.unsynced() == {}

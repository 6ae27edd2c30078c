"""Ledger rotation into segments: readers follow them with logical offsets; a crash during
rotation loses and duplicates nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from holon import config
from holon.store import jsonl, segments

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setenv("HOLON_RETENTION_LEDGER_SEGMENT_BYTES", "600")
    config.reset()


def _fill(path, n, start=0):
    for i in range(start, start + n):
        jsonl.append(path, {"i": i, "pad": "x" * 80}, fsync=False)


def test_readers_follow_rotated_segments(tmp_path, small):
    path = tmp_path / "transcript.jsonl"
    _fill(path, 40)
    segs = segments.segments(path)
    assert len(segs) >= 5 and segs[0].base == 0
    assert all(a.end == b.base for a, b in zip(segs, segs[1:], strict=False))  # contiguous
    assert all(oct(s.path.stat().st_mode & 0o777) == "0o600" for s in segs)
    assert [r["i"] for r in jsonl.read(path)] == list(range(40))
    assert [r["i"] for r in jsonl.tail(path, 17)] == list(range(23, 40))
    assert [r["i"] for r in jsonl.tail(path, 100)] == list(range(40))
    total = sum(s.size for s in segs) + (path.stat().st_size if path.exists() else 0)
    assert jsonl.end_offset(path) == total
    # an offset recorded before a rotation names the same line after it
    offsets = [here for here, _ in jsonl.lines(path, 0)]
    recs, end = jsonl.read_from(path, offsets[12])
    assert [r["i"] for r in recs] == list(range(12, 40)) and end == total
    assert jsonl.read_from(path, end) == ([], end)
    assert jsonl.scan(path) == (40, 0, False)


def test_other_ledgers_do_not_rotate(tmp_path, small):
    path = tmp_path / "work_items.jsonl"
    _fill(path, 20)
    assert segments.segments(path) == [] and len(list(jsonl.read(path))) == 20


def test_a_removed_old_segment_leaves_offsets_valid(tmp_path, small):
    path = tmp_path / "events.jsonl"
    _fill(path, 30)
    first, *_ = segments.segments(path)
    os.unlink(first.path)
    assert [r["i"] for r in jsonl.read(path)][-1] == 29
    assert jsonl.end_offset(path) == sum(s.size for s in segments.segments(path)) + first.size + (
        path.stat().st_size if path.exists() else 0
    )
    recs, _ = jsonl.read_from(path, 0)  # an offset in a removed segment: the next line left
    assert recs[0]["i"] > 0


APPEND = """
import sys
from holon.store import jsonl
start, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(start, start + n):
    jsonl.append(sys.argv[3], {"i": i, "pad": "x" * 80})
"""


@pytest.mark.parametrize("action", ["kill", "enospc"])
def test_a_crash_at_any_rotation_loses_and_duplicates_nothing(tmp_path, action):
    env = dict(os.environ, PYTHONPATH=REPO, HOLON_RETENTION_LEDGER_SEGMENT_BYTES="600")
    for at in (1, 2, 3):
        path = tmp_path / f"{action}{at}" / "transcript.jsonl"
        path.parent.mkdir()
        crash = dict(env, HOLON_CRASH_AT=f"jsonl.rotate:{at}:{action}")
        proc = subprocess.run([sys.executable, "-c", APPEND, "0", "40", str(path)], env=crash)
        done = [r["i"] for r in jsonl.read(path)]
        if action == "kill":
            # the append whose rotation was killed was written: every record up to it, once
            assert proc.returncode != 0 and done == list(range(len(done))) and done
        else:  # a rotation that fails leaves the append done; the next append rotates
            assert proc.returncode == 0 and done == list(range(40))
        subprocess.run(
            [sys.executable, "-c", APPEND, str(len(done)), "10", str(path)], env=env, check=True
        )
        assert [r["i"] for r in jsonl.read(path)] == list(range(len(done) + 10))
        assert jsonl.end_offset(path) == sum(s.size for s in segments.segments(path)) + (
            path.stat().st_size if path.exists() else 0
        )

"""holon.ops.gc in process: the artifact size limit removes the oldest unnamed artifacts first;
a held turn lock makes gc report busy and change nothing."""

from __future__ import annotations

import json
import os

from holon import config
from holon.home.init import init_home
from holon.ops import gc
from holon.store.locks import FileLock


def test_size_limit_removes_the_oldest_unnamed_artifacts(monkeypatch):
    monkeypatch.setenv("HOLON_RETENTION_ARTIFACT_KEEP_DAYS", "0")
    monkeypatch.setenv("HOLON_RETENTION_ARTIFACT_MAX_BYTES", "250")
    config.reset()
    home = init_home(None, "a")
    home.artifacts.mkdir(parents=True, exist_ok=True)
    for i in range(5):
        p = home.artifacts / f"exec-stdout-{i:08x}.log"
        p.write_bytes(b"x" * 100)
        os.utime(p, (1000 + i, 1000 + i))
    dry = gc.gc(home, dry_run=True)
    assert [r.path.rsplit("/", 1)[1] for r in dry.removed] == [
        "exec-stdout-00000000.log",
        "exec-stdout-00000001.log",
        "exec-stdout-00000002.log",
    ]
    assert len(list(home.artifacts.iterdir())) == 5
    done = gc.gc(home)
    assert done.bytes_freed == 300 and len(list(home.artifacts.iterdir())) == 2


def test_a_busy_agent_is_skipped(monkeypatch):
    home = init_home(None, "b")
    lock = FileLock(home.turn_lock)
    lock.acquire(blocking=False)
    try:
        report = gc.gc(home)
    finally:
        lock.release()
    assert report.outcome == "busy" and report.removed == []


def test_episode_segments_no_roll_up_covers_are_kept(agent, monkeypatch):
    """The episode block covers every folded turn through the roll-ups and the episodes after
    them: an old episode segment goes only once a roll-up covers it whole."""
    monkeypatch.setenv("HOLON_RETENTION_SEGMENT_KEEP_DAYS", "1")
    monkeypatch.setattr(gc, "_index_offsets", lambda home: {"episodes": 1 << 40})  # all indexed
    line = b'{"id": "ep-x"}\n'
    for base in (0, len(line), 2 * len(line)):  # two old segments and the newest
        seg = agent.ledger / f"context_episodes.2020-01-01.{base:012d}.jsonl"
        seg.write_bytes(line)
        os.utime(seg, (0, 0))

    def removed() -> list[str]:
        report = gc.GcReport(agent.agent_id, str(agent.root))
        gc._plan_segments(agent, 0, report, now=10 * 86400)
        return sorted(r.path.rsplit(".", 2)[-2] for r in report.removed)

    assert removed() == []  # no roll-up yet: every episode is the only account of its turns
    cursor = {"frontier": [], "episodes_offset": len(line)}  # the first segment is rolled up
    rollup = {"id": "ru-1", "level": 1, "cursor": cursor}
    agent.context_rollups.write_text(json.dumps(rollup) + "\n")
    assert removed() == ["000000000000"]

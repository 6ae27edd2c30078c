"""holon.ops.gc in process: the artifact size limit removes the oldest unnamed artifacts first;
a held turn lock makes gc report busy and change nothing."""

from __future__ import annotations

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

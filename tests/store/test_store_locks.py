"""holon.store.locks: flock FileLock (non-blocking, bounded waits) and short `locked` sections."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from holon.store.locks import FileLock, LockBusy, locked

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def held_elsewhere(tmp_path):
    """A lock file held by another process until the fixture ends."""
    path = tmp_path / "x.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "held"
    yield path, proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    proc.stdin.close()
    proc.stdout.close()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_non_blocking_acquire_raises_lock_busy_when_held_by_another_process(held_elsewhere):
    path, _ = held_elsewhere
    lock = FileLock(path)
    fds = _open_fds()
    with pytest.raises(LockBusy) as err:
        lock.acquire(blocking=False)
    assert str(path) in str(err.value)
    assert lock.fd is None and _open_fds() == fds  # the probe fd is closed again


def test_lock_dies_with_its_process(held_elsewhere):
    path, proc = held_elsewhere
    lock = FileLock(path)
    assert lock.is_held_elsewhere()
    proc.kill()
    proc.wait()
    lock.acquire(blocking=False)  # no stale lock file to clean up
    try:
        assert lock.fd is not None
    finally:
        lock.release()


def test_timeout_is_bounded(held_elsewhere):
    path, _ = held_elsewhere
    start = time.monotonic()
    with pytest.raises(LockBusy):
        FileLock(path).acquire(timeout=0.2)
    assert 0.18 <= time.monotonic() - start < 5


def test_timed_acquire_succeeds_when_released_in_time(held_elsewhere):
    path, proc = held_elsewhere
    proc.stdin.close()  # the holder exits and its lock goes with it
    lock = FileLock(path)
    lock.acquire(timeout=10)
    lock.release()


def test_second_fd_in_the_same_process_conflicts(tmp_path):
    path = tmp_path / "x.lock"
    first, second = FileLock(path), FileLock(path)
    first.acquire(blocking=False)
    try:
        with pytest.raises(LockBusy):
            second.acquire(blocking=False)
        assert second.is_held_elsewhere()
    finally:
        first.release()
    second.acquire(blocking=False)
    second.release()
    assert first.fd is None and second.fd is None


def test_context_manager_and_release_are_idempotent(tmp_path):
    path = tmp_path / "y.lock"
    lock = FileLock(path)
    with lock as got:
        assert got is lock and lock.fd is not None
        assert FileLock(path).is_held_elsewhere()
    assert lock.fd is None
    lock.release()  # a second release is harmless
    assert not FileLock(path).is_held_elsewhere()


def test_is_held_elsewhere_does_not_create_or_keep_the_lock(tmp_path):
    path = tmp_path / "z.lock"
    probe = FileLock(path)
    assert not probe.is_held_elsewhere()
    assert not path.exists()
    path.touch()
    assert not probe.is_held_elsewhere()
    other = FileLock(path)
    other.acquire(blocking=False)  # the probe kept nothing
    other.release()
    assert probe.fd is None


def test_is_held_elsewhere_sees_another_process(held_elsewhere):
    path, _ = held_elsewhere
    assert FileLock(path).is_held_elsewhere()


def test_locked_is_a_bounded_critical_section(held_elsewhere):
    path, _ = held_elsewhere
    start = time.monotonic()
    with pytest.raises(LockBusy):
        with locked(path, timeout=0.1):
            pytest.fail("entered a section held by another process")
    assert time.monotonic() - start < 5


def test_locked_releases_on_exception(tmp_path):
    path = tmp_path / "s.lock"
    with pytest.raises(RuntimeError):
        with locked(path):
            assert FileLock(path).is_held_elsewhere()
            raise RuntimeError("inside")
    assert not FileLock(path).is_held_elsewhere()
    with locked(path, timeout=0.1):
        pass


def test_locked_serialises_processes(tmp_path):
    """Two processes increment a counter under `locked`; no update is lost."""
    from helpers import subprocess_env

    counter = tmp_path / "n"
    counter.write_text("0")
    code = (
        "import sys\nfrom holon.store.locks import locked\n"
        "for _ in range(200):\n"
        "    with locked(sys.argv[1] + '.lock'):\n"
        "        n = int(open(sys.argv[1]).read())\n"
        "        open(sys.argv[1], 'w').write(str(n + 1))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(counter)], env=subprocess_env())
        for _ in range(2)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert counter.read_text() == "400"

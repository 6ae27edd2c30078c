"""holon.procs: process liveness (zombies count as gone) and process-group members from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from holon.procs import alive, group_members

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        stat = fh.read()
    return chr(stat[stat.rfind(b")") + 2])


def _until(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


def test_own_pid_is_alive():
    assert alive(os.getpid())
    assert alive(os.getppid())


def test_no_pid_is_not_alive():
    assert not alive(None)
    assert not alive(0)
    assert not alive(-1)


def test_reaped_process_is_gone():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not alive(proc.pid)


def test_zombie_counts_as_gone():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert alive(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        _until(lambda: _state(proc.pid) == "Z")  # killed, not yet reaped
        os.kill(proc.pid, 0)  # the pid still exists ...
        assert not alive(proc.pid)  # ... but it is gone
    finally:
        proc.kill()
        proc.wait()


def test_group_members_of_a_new_session():
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30; wait"], start_new_session=True)
    try:
        pgid = proc.pid
        assert os.getpgid(pgid) == pgid
        _until(lambda: len(group_members(pgid)) == 3)  # sh and its two sleeps
        members = group_members(pgid)
        assert proc.pid in members
        assert os.getpid() not in members
        assert all(os.getpgid(p) == pgid for p in members)
    finally:
        os.killpg(pgid, signal.SIGKILL)
        proc.wait()
    _until(lambda: group_members(pgid) == [])  # killed members (zombies included) are not listed


def test_group_members_of_an_unused_group_is_empty():
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    proc.wait()
    assert group_members(proc.pid) == []

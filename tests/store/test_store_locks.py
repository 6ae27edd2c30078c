"""holon.store.locks: FileLock is flock(2): one attempt, bounded and unbounded waits against real
other processes, 0600 lock files, no import beyond the stdlib, and short `locked` sections."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest
from helpers import subprocess_env

from holon.store.locks import FileLock, LockBusy, locked

# How another process takes the lock: raw flock(2), and holon's own FileLock.
TAKE = {
    "flock": (
        "import fcntl, os\n"
        "fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "release = lambda: fcntl.flock(fd, fcntl.LOCK_UN)\n"
    ),
    "holon": "from holon.store.locks import FileLock\nlock = FileLock(path)\nlock.acquire()\n"
    "release = lock.release\n",
}
# The holder says "held"; a "release" line releases the lock but keeps the process alive, and the
# end of stdin ends it.
HOLD = (
    "import sys\npath = sys.argv[1]\n{take}"
    'print("held", flush=True)\n'
    'if sys.stdin.readline().strip() == "release":\n'
    '    release()\n    print("released", flush=True)\n    sys.stdin.read()\n'
)
KINDS = list(TAKE)


@pytest.fixture
def hold(tmp_path):
    """hold(kind) -> (path, proc): a lock file held by another process until the test ends."""
    procs = []

    def start(kind: str = "flock"):
        path = tmp_path / f"{kind}.lock"
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLD.format(take=TAKE[kind]), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return path, proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


@pytest.fixture
def held_elsewhere(hold):
    return hold("flock")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _release_holder(proc) -> None:
    proc.stdin.write("release\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "released"


@pytest.mark.parametrize("kind", KINDS)
def test_non_blocking_acquire_raises_lock_busy_when_held_by_another_process(hold, kind):
    path, _ = hold(kind)
    lock = FileLock(path)
    fds = _open_fds()
    with pytest.raises(LockBusy) as err:
        lock.acquire(blocking=False)
    assert str(err.value) == str(path)
    assert not lock.held and _open_fds() == fds  # the attempt's fd is closed again


@pytest.mark.parametrize("kind", KINDS)
def test_bounded_wait_raises_lock_busy_after_about_the_timeout(hold, kind):
    path, _ = hold(kind)
    fds = _open_fds()
    start = time.monotonic()
    with pytest.raises(LockBusy):
        FileLock(path).acquire(timeout=0.3)
    assert 0.28 <= time.monotonic() - start < 3
    assert _open_fds() == fds


@pytest.mark.parametrize("kind", KINDS)
def test_unbounded_wait_gets_the_lock_once_the_holder_releases(hold, kind):
    path, proc = hold(kind)
    lock, done, errors = FileLock(path), threading.Event(), []

    def wait() -> None:
        try:
            lock.acquire()  # blocking, no timeout
        except BaseException as exc:  # noqa: BLE001 — reported to the test below
            errors.append(exc)
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    assert not done.wait(0.3)  # still waiting while the holder keeps it
    _release_holder(proc)
    assert done.wait(10) and errors == []
    assert lock.held and proc.poll() is None  # the release freed it, not the holder's exit
    lock.release()


@pytest.mark.parametrize("kind", KINDS)
def test_lock_dies_with_its_process(hold, kind):
    path, proc = hold(kind)
    lock = FileLock(path)
    assert lock.is_held_elsewhere()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lock.acquire(blocking=False)  # no stale lock file to clean up
    try:
        assert lock.held
    finally:
        lock.release()
    assert path.exists()  # the lock file stays in place


def test_timed_acquire_succeeds_when_released_in_time(held_elsewhere):
    path, proc = held_elsewhere
    proc.stdin.close()  # the holder exits and its lock goes with it
    lock = FileLock(path)
    lock.acquire(timeout=10)
    lock.release()


def test_other_processes_see_our_lock_as_flock(tmp_path):
    """Held here, the lock is busy for raw flock(2) in another process; then free."""
    path = tmp_path / "ours.lock"
    code = (
        "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n    print('busy')\nelse:\n    print('free')\n"
    )

    def other() -> str:
        out = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True
        )
        return out.stdout.strip() or out.stderr

    with FileLock(path):
        assert other() == "busy"
    assert other() == "free"


def test_locking_imports_nothing_beyond_the_standard_library(tmp_path):
    """Every admission takes a lock: it must cost no third-party import."""
    code = (
        "import sys\nbefore = set(sys.modules)\n"
        "import holon.store.locks\n"
        "holon.store.locks.FileLock(sys.argv[1]).acquire(blocking=False)\n"
        "new = {m.partition('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - set(sys.stdlib_module_names) - {'holon'}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "x.lock")],
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert proc.stdout.strip() == "[]", proc.stderr


def test_a_lock_file_unlinked_while_waiting_is_not_a_lock(tmp_path):
    """A waiter that gets the flock of a file someone unlinked meanwhile would share the lock
    with whoever locks the new file at that path: it locks the new file instead."""
    path = tmp_path / "x.lock"
    first = FileLock(path)
    first.acquire()
    waiter, done = FileLock(path), threading.Event()
    threading.Thread(target=lambda: (waiter.acquire(timeout=10), done.set()), daemon=True).start()
    time.sleep(0.2)
    os.unlink(path)
    third = FileLock(path)
    third.acquire(blocking=False)  # the new file at the path
    first.release()  # the waiter gets the old file's flock, sees it unlinked, and waits again
    assert not done.wait(0.5) and not waiter.held
    third.release()
    assert done.wait(10) and waiter.held
    assert FileLock(path).is_held_elsewhere()
    waiter.release()


def test_a_forked_child_neither_holds_nor_releases_the_parents_lock(tmp_path):
    path = tmp_path / "x.lock"
    lock = FileLock(path)
    lock.acquire()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        ok = not lock.held
        lock.release()  # a no-op here
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert lock.held and FileLock(path).is_held_elsewhere()
    lock.release()
    assert not FileLock(path).is_held_elsewhere()


def test_a_lock_dropped_while_held_is_released(tmp_path):
    path = tmp_path / "x.lock"
    lock = FileLock(path)
    lock.acquire()
    del lock
    assert not FileLock(path).is_held_elsewhere()


def test_lock_files_are_private_to_their_owner(tmp_path):
    old = os.umask(0)  # even a permissive umask gives 0600
    try:
        with FileLock(tmp_path / "a.lock"):
            pass
        with locked(tmp_path / "b.lock", timeout=1):
            pass
    finally:
        os.umask(old)
    for name in ("a.lock", "b.lock"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600


def test_a_lock_never_creates_its_directory(tmp_path):
    path = tmp_path / "gone" / "x.lock"
    fds = _open_fds()
    with pytest.raises(FileNotFoundError):
        FileLock(path).acquire(blocking=False)
    with pytest.raises(FileNotFoundError):
        with locked(path, timeout=0.1):
            pass
    assert not FileLock(path).is_held_elsewhere()
    assert not path.parent.exists() and _open_fds() == fds


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
    assert not first.held and not second.held


def test_an_unbounded_wait_on_a_lock_this_thread_holds_fails_instead_of_hanging(tmp_path):
    """The deadlock check: RuntimeError at once; a bounded wait is LockBusy as usual, and
    another thread simply waits for the release."""
    path = tmp_path / "x.lock"
    first, second = FileLock(path), FileLock(path)
    first.acquire()
    fds = _open_fds()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="[Dd]eadlock"):
        second.acquire()
    assert time.monotonic() - start < 1 and not second.held and _open_fds() == fds
    with pytest.raises(LockBusy):
        second.acquire(timeout=0.1)
    done = threading.Event()
    threading.Thread(target=lambda: (second.acquire(), done.set()), daemon=True).start()
    assert not done.wait(0.2)
    first.release()
    assert done.wait(10) and second.held
    second.release()
    assert not FileLock(path).is_held_elsewhere()


def test_a_held_lock_is_not_re_entrant(tmp_path):
    lock = FileLock(tmp_path / "x.lock")
    with lock:
        with pytest.raises(RuntimeError, match="already held"):
            lock.acquire(blocking=False)
        assert lock.held
    assert not lock.held  # one release frees it: no hidden counter


def test_context_manager_and_release_are_idempotent(tmp_path):
    path = tmp_path / "y.lock"
    lock = FileLock(path)
    with lock as got:
        assert got is lock and lock.held
        assert FileLock(path).is_held_elsewhere()
    assert not lock.held
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
    assert not probe.held


@pytest.mark.parametrize("kind", KINDS)
def test_is_held_elsewhere_sees_another_process(hold, kind):
    path, proc = hold(kind)
    fds = _open_fds()
    assert FileLock(path).is_held_elsewhere()
    _release_holder(proc)
    assert not FileLock(path).is_held_elsewhere()
    assert _open_fds() == fds


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

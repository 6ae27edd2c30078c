"""Short writes, full disks, crash points and private modes in the store layer."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run, subprocess_env

from holon.store import atomic, crashpoint, jsonl
from holon.store.queue import Queue


def short_writes(monkeypatch, *, fail_after: int | None = None) -> None:
    """os.write writes at most 3 bytes per call; after `fail_after` bytes it raises ENOSPC."""
    real = os.write
    written = [0]

    def write(fd: int, data) -> int:
        if fail_after is not None and written[0] >= fail_after:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = real(fd, bytes(data[:3]))
        written[0] += n
        return n

    monkeypatch.setattr(os, "write", write)


def test_short_writes_are_completed(tmp_path, monkeypatch):
    short_writes(monkeypatch)
    q = Queue(tmp_path / "q")
    q.ensure()
    name = q.put({"id": "m1", "text": "x" * 100}, "normal")
    jsonl.append(tmp_path / "l.jsonl", {"a": "y" * 50})
    atomic.write_json(tmp_path / "s.json", {"b": "z" * 50})
    monkeypatch.undo()
    assert q.read_new(name) == {"id": "m1", "text": "x" * 100}
    assert list(jsonl.read(tmp_path / "l.jsonl")) == [{"a": "y" * 50}]
    assert json.loads((tmp_path / "s.json").read_text()) == {"b": "z" * 50}


def test_a_full_disk_leaves_no_half_message_and_no_half_line(tmp_path, monkeypatch):
    q = Queue(tmp_path / "q")
    q.ensure()
    ledger = tmp_path / "l.jsonl"
    jsonl.append(ledger, {"first": 1})
    short_writes(monkeypatch, fail_after=10)
    with pytest.raises(OSError) as exc:
        q.put({"id": "m1", "text": "x" * 100}, "normal")
    assert exc.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        jsonl.append(ledger, {"second": "y" * 100})
    with pytest.raises(OSError):
        atomic.write_json(tmp_path / "s.json", {"b": "z" * 100})
    monkeypatch.undo()
    assert q.pending() == [] and os.listdir(q.tmp) == []  # nothing queued, nothing left
    assert ledger.read_bytes() == b'{"first":1}\n'  # cut back: no partial line
    assert sorted(os.listdir(tmp_path)) == ["l.jsonl", "q"]  # no staged s.json left


def test_prompt_on_a_full_disk_says_disk_full_and_queues_nothing(holon_env, script):
    assert run("init", "--agent-id", "a").returncode == 0
    proc = run(
        "prompt",
        "a",
        "--no-wait",
        "hello",
        env=subprocess_env(
            HOLON_CRASH_AT="queue.write:1:enospc", HOLON_MODEL=script({"text": "ok"})
        ),
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("holon: disk_full: ")
    assert "hint: free space" in proc.stderr and "Traceback" not in proc.stderr
    queue = holon_env / "agents" / "a" / ".holon" / "queue"
    assert [p for d in ("new", "cur", "tmp", "dead") for p in (queue / d).iterdir()] == []


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**subprocess_env(), "PYTHONPATH": str(REPO), **env},
        timeout=30,
    )


WRITER = """
from holon.store import atomic, jsonl
import sys
d = sys.argv[1] if len(sys.argv) > 1 else "."
for i in range(3):
    jsonl.append("l.jsonl", {"i": i})
atomic.write_json("s.json", {"done": True})
"""


def test_crash_at_names_a_step_and_kills_there(tmp_path):
    trace = tmp_path / "trace"
    os.chdir(tmp_path)
    assert _python(WRITER, HOLON_CRASH_TRACE=str(trace)).returncode == 0
    names = [line.split()[2] for line in trace.read_text().splitlines()]
    assert names == ["jsonl.append"] * 3 + ["atomic.write", "atomic.replace"]
    for f in ("l.jsonl", "s.json"):
        os.unlink(f)
    proc = _python(WRITER, HOLON_CRASH_AT="jsonl.append:2")
    assert proc.returncode == -signal.SIGKILL
    assert list(jsonl.read("l.jsonl")) == [{"i": 0}] and not os.path.exists("s.json")


def test_a_torn_crash_writes_half_a_line_that_readers_skip_and_writers_repair(tmp_path):
    os.chdir(tmp_path)
    proc = _python(WRITER, HOLON_CRASH_AT="jsonl.append:2:torn")
    assert proc.returncode == -signal.SIGKILL
    data = Path("l.jsonl").read_bytes()
    assert data.startswith(b'{"i":0}\n') and not data.endswith(b"\n")  # half of line 2
    assert list(jsonl.read("l.jsonl")) == [{"i": 0}]
    jsonl.append("l.jsonl", {"i": 9})
    assert list(jsonl.read("l.jsonl")) == [{"i": 0}, {"i": 9}]


def test_an_enospc_crash_point_raises_and_removes_the_staged_file(tmp_path):
    os.chdir(tmp_path)
    proc = _python(WRITER, HOLON_CRASH_AT="atomic.replace:1:enospc")
    assert proc.returncode == 1 and "No space left" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["l.jsonl"]


def test_a_bad_spec_is_refused_plainly(tmp_path):
    proc = _python("import holon.store.crashpoint", HOLON_CRASH_AT="x:y:z")
    assert proc.returncode != 0 and "expected [PATTERN:]N[:ACTION]" in proc.stderr


def test_crash_variables_are_not_inherited_by_children(tmp_path):
    code = "import holon.store.crashpoint, os; print(os.environ.get('HOLON_CRASH_AT'))"
    proc = _python(code, HOLON_CRASH_AT="zzz.never:1")
    assert proc.stdout.strip() == "None"
    assert crashpoint.step("anything") is None  # unarmed here: a no-op


def test_stale_temps_of_dead_writers_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    (tmp_path / f".state.json.tmp.{dead}").write_text("{")
    (tmp_path / f".state.json.tmp.{os.getpid()}").write_text("{")
    (tmp_path / "state.json").write_text("{}")
    assert atomic.remove_stale_temps(tmp_path) == [f".state.json.tmp.{dead}"]
    assert sorted(os.listdir(tmp_path)) == [f".state.json.tmp.{os.getpid()}", "state.json"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_homes_are_private_whatever_the_umask(holon_env, tmp_path, script, umask):
    model = script({"text": "ok"})
    code = (
        f"import os, sys; os.umask({umask:#o}); from holon.cli.main import main; "
        "sys.exit(main(sys.argv[1:]))"
    )

    def holon(*args: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=subprocess_env(HOLON_HOME=str(holon_env), HOLON_MODEL=model),
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr

    holon("init", "--agent-id", "a")
    holon("init", str(tmp_path / "b"))
    holon("prompt", "a", "--no-wait", "hi")
    for home in (holon_env / "agents" / "a", tmp_path / "b"):
        dot = home / ".holon"
        assert mode(home) == 0o700 and mode(dot) == 0o700
        for p in dot.rglob("*"):
            if p.is_dir():
                assert mode(p) & 0o077 == 0, p
            elif p.is_file():
                assert mode(p) & 0o077 == 0, p
    assert mode(holon_env / "agents") == 0o700
    assert mode(holon_env / "registry.json") & 0o077 == 0


def test_a_stricter_umask_narrows_new_files_further(tmp_path):
    code = (
        "import os; os.umask(0o277); from holon.store import atomic, jsonl; "
        "atomic.write_text('f', 'x'); jsonl.append('l.jsonl', {})"
    )
    os.chdir(tmp_path)
    assert _python(code).returncode == 0
    assert mode(tmp_path / "f") == 0o400 and mode(tmp_path / "l.jsonl") == 0o400


def test_a_cloned_home_is_made_private_on_first_use(holon_env, script):
    assert run("init", "--agent-id", "a").returncode == 0
    home = holon_env / "agents" / "a"
    os.chmod(home, 0o755)
    os.chmod(home / ".holon", 0o755)
    assert run("status", "a").returncode == 0
    model = script({"text": "ok"})
    assert (
        run("prompt", "a", "--no-wait", "hi", env=subprocess_env(HOLON_MODEL=model)).returncode == 0
    )
    assert mode(home) == 0o700 and mode(home / ".holon") == 0o700

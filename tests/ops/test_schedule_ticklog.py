"""holon.ops.ticklog: the log of scheduled ticks: blocks, modes, rotation, concurrent writers."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from helpers import subprocess_env

from holon.ops import ticklog


def test_block_is_timestamped_and_names_the_run(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2027-01-01T10:00:00Z")
    text = ticklog.block("--all", 1, ["a: ran\n  msg_1 failed", "hint: x"])
    assert text == (
        f"== 2027-01-01T10:00:00.000Z holon tick --all (pid {os.getpid()}): exit 1\n"
        "a: ran\n  msg_1 failed\nhint: x\n"
    )


def test_log_path_is_under_holon_home(holon_env):
    assert ticklog.log_path() == holon_env / "logs" / "tick.log"


def test_append_creates_a_private_file_in_a_private_directory(tmp_path):
    path = tmp_path / "h" / "logs" / "tick.log"
    ticklog.append(path, "one\n")
    ticklog.append(path, "two\n")
    assert path.read_text() == "one\ntwo\n"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_rotation_keeps_three_older_files(tmp_path):
    path = tmp_path / "tick.log"
    for n in range(10):
        ticklog.append(path, f"{n}" * 40 + "\n", max_bytes=100)  # two blocks fit in a file
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["tick.log", "tick.log.1", "tick.log.2", "tick.log.3"]
    assert [path.with_name(n).read_text()[0] for n in names] == ["8", "6", "4", "2"]
    assert all(os.path.getsize(path.with_name(n)) <= 100 for n in names)
    assert stat.S_IMODE(path.with_name("tick.log.3").stat().st_mode) == 0o600


def test_a_block_larger_than_the_limit_still_lands_whole(tmp_path):
    path = tmp_path / "tick.log"
    ticklog.append(path, "small\n", max_bytes=10)
    ticklog.append(path, "x" * 50 + "\n", max_bytes=10)
    assert (
        path.read_text() == "x" * 50 + "\n" and (tmp_path / "tick.log.1").read_text() == "small\n"
    )


WRITER = """
import sys
from pathlib import Path
from holon.ops import ticklog
for n in range(200):
    ticklog.append(Path(sys.argv[1]), f"{sys.argv[2]}-{n}\\n" + "." * 200 + "\\n", max_bytes=30000)
"""


def test_concurrent_writers_never_interleave_or_lose_a_block(tmp_path):
    path = tmp_path / "logs" / "tick.log"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), w], env=subprocess_env())
        for w in "ab"
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    text = "".join(f.read_text() for f in sorted(path.parent.iterdir()))
    lines = text.splitlines()
    heads = [ln for ln in lines if not ln.startswith(".")]
    assert sorted(heads) == sorted(f"{w}-{n}" for w in "ab" for n in range(200))  # none lost
    assert lines == [x for h in heads for x in (h, "." * 200)]  # none torn or interleaved
    assert sorted(f.name for f in path.parent.iterdir()) == ["tick.log", "tick.log.1", "tick.log.2"]
    assert all(os.path.getsize(f) <= 30000 for f in path.parent.iterdir())

"""Timers refuse intervals that would spin the agent and cron expressions that are not five valid
fields; a corrupt timer file is set aside (with an event), never fired, never a crash."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import run, subprocess_env

from holon.agent import timers
from holon.errors import InvalidInput


@pytest.mark.parametrize(
    "every", ["1ms", "500ms", "0.5s", "0", "-1s", "99999999999999999999d", "11y"]
)
def test_every_outside_the_limits_is_refused(agent, every: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        timers.create(agent, every=every)
    assert exc.value.kind == "invalid_duration"


def test_every_at_the_limits_is_accepted(agent) -> None:
    assert timers.create(agent, every="1s")["interval_s"] == 1
    assert timers.create(agent, every="3660d")["interval_s"] == timers.MAX_DELAY_S


@pytest.mark.parametrize(
    "cron",
    [
        "* * * * * *",
        "* * * *",
        "",
        "61 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * 32 * *",
        "* * * 13 *",
        "* * * * 8",
        "5-1 * * * *",
        "*/0 * * * *",
        "@reboot",
        "a b c d e",
        "1,,2 * * * *",
    ],
)
def test_bad_cron_is_refused(agent, cron: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        timers.create(agent, cron=cron, tz="UTC")
    assert exc.value.kind == "invalid_cron"


@pytest.mark.parametrize(
    "cron", ["0 8 * * 1-5", "*/15 * * * *", "0 0 1 jan *", "0 9 * * mon-fri", "0 0 * * 7"]
)
def test_good_cron_is_accepted(agent, cron: str) -> None:
    assert timers.create(agent, cron=cron, tz="UTC")["schedule"] == "cron"


def test_the_cli_refuses_a_fast_timer(holon_env: Path) -> None:
    assert run("init", "--agent-id", "a").returncode == 0
    proc = run("timer", "create", "a", "--every", "1ms")
    assert proc.returncode == 2 and proc.stderr.startswith("holon: invalid_duration: ")
    proc = run("timer", "create", "a", "--cron", "* * * * * *")
    assert proc.returncode == 2 and proc.stderr.startswith("holon: invalid_cron: ")


CORRUPT = {
    "garbage": b"\xff\x00not json",
    "empty": b"",
    "array": b"[]",
    "nan": b'{"id": "tmr_x", "schedule": "once", "due_ts": NaN}',
    "wrong-id": b'{"id": "other", "schedule": "once", "due_ts": 1}',
    "bad-schedule": b'{"id": "tmr_x", "schedule": "yearly", "due_ts": 1}',
    "bad-interval": b'{"id": "tmr_x", "schedule": "every", "interval_s": "x", "due_ts": 1}',
    "bad-cron": b'{"id": "tmr_x", "schedule": "cron", "cron": "* * * * * *", "tz": "UTC", '
    b'"due_ts": 1}',
    "bad-tz": b'{"id": "tmr_x", "schedule": "cron", "cron": "* * * * *", "tz": "Mars/X", '
    b'"due_ts": 1}',
    "deep": b"[" * 100_000,
}


@pytest.mark.parametrize("content", list(CORRUPT.values()), ids=list(CORRUPT))
def test_a_corrupt_timer_is_set_aside(holon_env: Path, content: bytes) -> None:
    assert run("init", "--agent-id", "a").returncode == 0
    tdir = holon_env / "agents" / "a" / ".holon" / "timers"
    tdir.mkdir(parents=True, exist_ok=True)
    (tdir / "tmr_x.json").write_bytes(content)
    proc = run("timer", "list", "a", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
    assert not (tdir / "tmr_x.json").exists() and (tdir / "tmr_x.json.corrupt").exists()
    events = run("events", "a", "--jsonl").stdout
    assert '"timer_set_aside"' in events


@pytest.mark.parametrize("kind", ["dir", "fifo", "symlink-zero", "garbage"])
def test_a_corrupt_due_timer_is_set_aside_by_the_tick(holon_env: Path, kind: str) -> None:
    assert run("init", "--agent-id", "a").returncode == 0
    timer_id = run("timer", "create", "a", "--after", "1s").stdout.split()[0]
    target = holon_env / "agents" / "a" / ".holon" / "timers" / f"{timer_id}.json"
    target.unlink()
    {
        "dir": target.mkdir,
        "fifo": lambda: os.mkfifo(target),
        "symlink-zero": lambda: os.symlink("/dev/zero", target),
        "garbage": lambda: target.write_bytes(b"\x00garbage"),
    }[kind]()
    later = subprocess_env(HOLON_NOW=str(time.time() + 60))
    proc = run("tick", "a", env=later, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert not os.path.lexists(target)
    assert '"timer_set_aside"' in run("events", "a", "--jsonl").stdout
    assert run("timer", "list", "a").returncode == 0

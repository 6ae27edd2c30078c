"""Closed pipes through the real entry point: a follow mode ends promptly when its reader goes
away (`holon transcript AGENT --follow | head -1`), and a command whose reader closed the pipe
early exits 0, never 1 (`holon transcript AGENT --jsonl | head -c 10`)."""

from __future__ import annotations

import subprocess

import pytest
from helpers import holon_cmd, subprocess_env

from holon.store import jsonl

FOLLOWS = [
    ("transcript", "a", "--follow"),
    ("transcript", "a", "--follow", "--jsonl"),
    ("events", "a", "--follow"),
    ("briefs", "a", "--follow"),
]


def _entries(agent, n: int = 1, size: int = 10) -> None:
    """`n` messages of `size` characters each, in the transcript, the events and the briefs."""
    for ledger, key in ((agent.transcript, "text"), (agent.events, "summary")):
        records = [
            {"kind": "message", "event_seq": i + 1, "data": {key: "x" * size}} for i in range(n)
        ]
        jsonl.append_many(ledger, records)
    jsonl.append_many(agent.briefs, [{"kind": "result", "text": "y" * size} for _ in range(n)])


@pytest.mark.parametrize("args", FOLLOWS, ids=lambda a: " ".join(a[2:]) + f" {a[0]}")
def test_a_follow_mode_ends_when_its_reader_goes_away(agent, args):
    _entries(agent)
    proc = subprocess.Popen([*holon_cmd(), *args], env=subprocess_env(), stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline()  # what head -1 reads; nothing more is ever written
        proc.stdout.close()  # head exits
        assert proc.wait(timeout=15) == 0  # noticed while waiting, not at a next write
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("fmt", [(), ("--jsonl",)], ids=["text", "jsonl"])
def test_a_reader_that_closes_early_is_not_a_failure(agent, fmt):
    _entries(agent, n=200, size=2000)  # far more than a pipe buffer holds
    proc = subprocess.Popen(
        [*holon_cmd(), "transcript", "a", *fmt],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert len(proc.stdout.read(10)) == 10  # head -c 10
        proc.stdout.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stderr.read() == b""  # no traceback, no error line
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()


def test_briefs_all_follow_prints_every_agents_new_briefs(agent):
    from holon.home.init import init_home

    other = init_home(None, "b")
    jsonl.append(agent.briefs, {"kind": "result", "text": "old from a"})
    proc = subprocess.Popen(
        [*holon_cmd(), "briefs", "--all", "--follow"],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().startswith("a ")
        jsonl.append(other.briefs, {"kind": "result", "text": "new from b"})
        assert proc.stdout.readline().rstrip().endswith("result: new from b")
        proc.stdout.close()
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()
        proc.wait()


def test_briefs_wants_an_agent_or_all(agent):
    from helpers import run

    for args in ((), ("a", "--all")):
        r = run("briefs", *args)
        assert r.returncode == 2 and r.stderr.startswith("holon: usage: "), r.stderr


def test_reader_gone_tells_a_closed_pipe_from_a_quiet_one():
    import os

    from holon.cli import pipes

    read, write = os.pipe()
    with os.fdopen(write, "w") as stream:
        assert pipes.reader_gone(0, stream) is False  # a reader that is only quiet
        os.close(read)
        assert pipes.reader_gone(5, stream) is True  # at once, not after the 5 s
        try:
            pipes.wait(5, stream)
        except pipes.ReaderGone:
            pass
        else:
            raise AssertionError("wait() did not notice the closed pipe")
        stream.write = lambda text: len(text)  # nothing to flush into the closed pipe on close

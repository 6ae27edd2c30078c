"""Reliability: concurrent enqueuers and tickers, SIGKILLed ticks, torn and garbage ledger lines."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, holon_cmd, run, subprocess_env, wait_for

from holon.store import jsonl

LEDGERS = ("messages", "transcript", "events", "briefs")

ENQUEUER = """
import sys
from holon.home.registry import resolve
from holon.agent.admission import admit
home = resolve("a")
for i in range(int(sys.argv[2])):
    text = f"{sys.argv[1]}-{i}"
    admit(home, "enqueue", "channel_event", {"type": "text", "text": text}, source="load")
"""

TICKER = """
import os, sys, time
from holon.home.registry import resolve
from holon.runtime.tick import tick
home = resolve("a")
stop = sys.argv[1]
while True:
    done = os.path.exists(stop)
    tick(home, until_idle=True)
    if done and not home.queue.pending() and not home.queue.in_progress():
        break
    time.sleep(0.01)
"""


def _ids(path: Path, key: str = "id") -> list[str]:
    return [r[key] for r in jsonl.read(path)]


def test_concurrent_enqueuers_and_tickers_lose_nothing(agent, script, tmp_path):
    n_proc, per_proc = 8, 200
    model = script(*[{"text": "ok"} for _ in range(n_proc * per_proc + 10)])
    env = subprocess_env(HOLON_MODEL=model)
    stop = tmp_path / "stop"
    tickers = [
        subprocess.Popen([sys.executable, "-c", TICKER, str(stop)], env=env) for _ in range(2)
    ]
    enqueuers = [
        subprocess.Popen([sys.executable, "-c", ENQUEUER, f"p{i}", str(per_proc)], env=env)
        for i in range(n_proc)
    ]
    for p in enqueuers:
        assert p.wait(timeout=600) == 0
    stop.touch()
    for p in tickers:
        assert p.wait(timeout=600) == 0
    admitted = _ids(agent.messages)
    assert len(admitted) == len(set(admitted)) == n_proc * per_proc
    briefed = [b["related_message_id"] for b in jsonl.read(agent.briefs) if b["kind"] == "result"]
    assert sorted(briefed) == sorted(admitted)  # every message processed exactly once
    assert (
        not agent.queue.pending()
        and not agent.queue.in_progress()
        and not agent.queue.dead_letters()
    )
    seqs = [e["event_seq"] for e in jsonl.read(agent.events)]
    assert seqs == list(range(1, len(seqs) + 1))


def test_sigkilled_ticks_recover_without_loss_or_double_effects(agent, script, tmp_path):
    """Fifty ticks killed: every other one while its first tool call runs (seen in the side
    effects file, the tool held until `release` exists), the others after a random delay."""
    rng = random.Random(20261121)
    fx, release = tmp_path / "sidefx", tmp_path / "release"
    hold = {"sleep_ms": 120_000, "until_file": str(release)}
    rounds = []
    for i in range(400):
        if i % 2 == 0:
            rounds.append(
                {
                    "text": "working",
                    "tool_calls": [
                        {"name": "AppendLine", "arguments": {"line": f"r{i}", **hold}},
                        {"name": "AppendLine", "arguments": {"line": f"s{i}", "sleep_ms": 40}},
                    ],
                }
            )
        else:
            rounds.append({"text": f"finished {i}"})
    env = subprocess_env(
        HOLON_MODEL=script(*rounds),
        HOLON_TOOL_PLUGINS="plugins.sidefx:AppendLine",
        SIDEFX_FILE=str(fx),
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
        HOLON_DELIVERY_LIMIT="6",
    )

    def effects() -> int:
        return len(fx.read_text().splitlines()) if fx.exists() else 0

    killed = 0
    for i in range(50):
        release.unlink(missing_ok=True)
        assert run("prompt", "a", f"job {i}", "--no-wait", env=env).returncode == 0
        before = effects()
        proc = subprocess.Popen(
            [*holon_cmd(), "tick", "a"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if i % 2 == 0:  # in the middle of a tool call: its effect is written, it has not returned
            started = lambda n=before, p=proc: effects() > n or p.poll() is not None  # noqa: E731
            wait_for(started, timeout=120)
        else:
            time.sleep(rng.uniform(0.05, 0.7))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait()
        release.touch()  # the turns the recovery runs hold no tool
        r = run("tick", "a", "--until-idle", env=env)
        assert r.returncode in (0, 1), r.stderr
    assert killed >= 10, "the kill schedule should interrupt a good share of turns"
    for name in LEDGERS:
        good, bad, _torn = jsonl.scan(agent.ledger / f"{name}.jsonl")
        assert bad == 0 and good > 0, name
    admitted = set(_ids(agent.messages))
    settled = {
        b["related_message_id"]
        for b in jsonl.read(agent.briefs)
        if b["kind"] in ("result", "failure")
    }
    assert admitted == settled and len(admitted) == 50
    assert not agent.queue.pending() and not agent.queue.in_progress()
    effects = fx.read_text().splitlines()
    keys = [":".join(line.split(":")[:2]) for line in effects]
    assert len(keys) == len(set(keys)), "a tool call ran twice"
    results = [e["data"] for e in jsonl.read(agent.transcript) if e["kind"] == "tool_result"]
    interrupted = [
        r
        for r in results
        if r["envelope"]["status"] == "error"
        and r["envelope"]["error"]["kind"] == "tool_interrupted"
    ]
    ran = {k for k in keys}
    for r in results:
        if r["envelope"]["status"] == "success":
            assert any(k.endswith(":" + r["call_id"]) for k in ran)
    assert interrupted, "a tick killed in the middle of a tool call leaves it interrupted"


@pytest.mark.parametrize("ledger", LEDGERS)
def test_torn_and_garbage_lines_in_each_ledger(agent, script, ledger):
    assert (
        run("prompt", "a", "first", "--model", script({"text": "one"}, {"text": "two"})).returncode
        == 0
    )
    path = agent.ledger / f"{ledger}.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'garbage that is not json\n\xff\xfe\x00\n{"half": ')
    r = run("prompt", "a", "second", "--json", "--model", script({"text": "one"}, {"text": "two"}))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["final_text"] == "two"
    good, bad, torn = jsonl.scan(path)
    assert bad == 2 and not torn  # garbage kept aside by readers, torn tail repaired by the writer
    for cmd in (
        ["transcript", "a", "--jsonl"],
        ["events", "a", "--jsonl"],
        ["briefs", "a", "--jsonl"],
        ["status", "a", "--json"],
    ):
        out = run(*cmd)
        assert out.returncode == 0, (cmd, out.stderr)
    seqs = [e["event_seq"] for e in jsonl.read(agent.events)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and "locks" not in p.parts:
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


@pytest.mark.parametrize(
    "args,stdin,kind",
    [
        (
            ["enqueue", "a", "--kind", "webhook_event", "--json-body", "{not json"],
            None,
            "invalid_json",
        ),
        (
            ["enqueue", "a", "--kind", "webhook_event", "--json-body", "-"],
            b"\xff\xfe",
            "invalid_utf8",
        ),
        (["enqueue", "a", "--kind", "no_such_kind", "--text", "x"], None, "Invalid value"),
        (["enqueue", "a", "--kind", "channel_event"], None, "invalid_body"),
        (["prompt", "a", "-", "--no-wait"], b"caf\xe9", "invalid_utf8"),
        (
            ["enqueue", "a", "--kind", "channel_event", "--text", "-"],
            b"x" * 300_000,
            "oversize_body",
        ),
        (
            ["enqueue", "a", "--kind", "channel_event", "--text", "x", "--priority", "urgent"],
            None,
            "Invalid value",
        ),
    ],
)
def test_malformed_input_is_a_clear_error_and_writes_nothing(agent, args, stdin, kind):
    before = _snapshot(agent.root)
    r = run(*args, input=stdin)
    assert r.returncode == 2, r.stderr
    assert kind in r.stderr
    assert _snapshot(agent.root) == before


def test_malformed_envelope_in_queue_is_set_aside(agent, script):
    (agent.queue.new / "2-00000000000000000001-1-dead.json").write_bytes(
        b'{"kind": "operator_prompt"'
    )
    r = run("prompt", "a", "hello", "--model", script({"text": "fine"}))
    assert r.returncode == 0 and r.stdout == "fine\n"
    assert any(n.endswith(".unreadable") for n in os.listdir(agent.queue.dead))


def test_poison_message_is_dead_lettered(agent, script):
    """A message whose turn kills the tick every time is set aside after the delivery limit."""
    env = subprocess_env(
        HOLON_MODEL=script(*[{"tool_calls": [{"name": "Crash", "arguments": {}}]}] * 10),
        HOLON_TOOL_PLUGINS="plugins.sidefx:Crash",
        PYTHONPATH=f"{REPO}:{REPO / 'tests' / 'support'}",
    )
    assert run("prompt", "a", "poison", "--no-wait", env=env).returncode == 0
    name = os.listdir(agent.queue.new)[0]
    codes = [run("tick", "a", env=env).returncode for _ in range(4)]
    assert codes[:3] == [-signal.SIGKILL] * 3 and codes[3] == 0
    assert os.listdir(agent.queue.dead) == [name]
    assert json.loads((agent.queue.dead / name).read_text())["delivery_attempts"] == 3
    failure = [b for b in jsonl.read(agent.briefs) if b["kind"] == "failure"]
    assert failure and "delivery attempts" in failure[-1]["text"]
    assert (
        run(
            "prompt", "a", "still alive?", "--model", script({"text": "yes"}, name="s2.jsonl")
        ).stdout
        == "yes\n"
    )

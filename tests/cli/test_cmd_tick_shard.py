"""`holon tick --all --shard K/N` and `holon watch --all --shard`: shard processes running at once
over one HOLON_HOME tick every agent with work exactly once between them, on a full pass and on
a pass over the due index; bad shards are usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cmd_checks import fails
from helpers import subprocess_env

from holon.agent import admission
from holon.home import dueindex
from holon.home.init import init_home
from holon.home.shard import Shard

SHARDS = 3


def _queue_all(homes) -> None:
    for home in homes:
        admission.admit(home, "enqueue", "system_tick", admission.text_body("go"))


def _shards_at_once(env) -> dict[str, list[int]]:
    """Run every shard's `tick --all --json` concurrently: agent id -> shards that ran it."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "holon", "tick", "--all", "--shard", f"{k}/{SHARDS}", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(SHARDS)
    ]
    ran: dict[str, list[int]] = {}
    for k, proc in enumerate(procs):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        for report in json.loads(out)["agents"]:
            if report["outcome"] == "ran":
                ran.setdefault(report["agent_id"], []).append(k)
    return ran


def _trust_the_records() -> None:
    """Let the next pass of every shard read the index (the agents directory changed within
    SETTLE_S of the full pass, which would otherwise make the next pass a full one too)."""
    for record in Path(dueindex.index_dir()).glob(".scan.*.json"):
        doc = json.loads(record.read_text())
        record.write_text(json.dumps({**doc, "signature": dueindex.signature()}))


def test_concurrent_shards_tick_every_agent_exactly_once(holon_env, script):
    env = subprocess_env(HOLON_MODEL=script({"text": "first"}, {"text": "second"}))
    homes = [init_home(None, f"agent{i:02d}") for i in range(15)]
    want = {
        h.agent_id: [k for k in range(SHARDS) if Shard(k, SHARDS).owns(h.agent_id)] for h in homes
    }
    assert {k for ks in want.values() for k in ks} == set(range(SHARDS))  # every shard has work
    for round_ in ("full pass", "pass over the due index"):
        _queue_all(homes)
        assert _shards_at_once(env) == want, round_
        _trust_the_records()
        assert all(not h.queue.pending() and not h.queue.in_progress() for h in homes)


def test_bad_shards(agent):
    fails("tick", "--all", "--shard", "2/2", code=2, kind="bad_shard")
    fails("tick", "--all", "--shard", "x", code=2, kind="bad_shard")
    fails("tick", "a", "--shard", "0/2", code=2, kind="bad_shard")
    fails("watch", "a", "--shard", "0/2", code=2, kind="bad_shard")
    fails("watch", "--all", "--shard", "1/0", code=2, kind="bad_shard")

"""Idle cost at scale: `holon tick --all` over 1, 3,000 and 10,000 idle agents vs one idle tick
(CPU, in alternation: benchmarks/interleave.py), the pass after a `holon init`, the periodic full
pass, and `holon watch --all` idle CPU and pickup latency (enqueue -> turn start) at 1 and 5,000.

Targets (docs/architecture.md section 13): `tick --all` over 10,000 idle agents <= 2x one idle
tick; the next `tick --all` after one `holon init` over 3,000 <= 2x; 10,000 agents under cron
every minute with an agent created every minute, averaged over the 10 minutes between periodic
full passes (9 passes after an init, 1 full pass) <= 1.5x; watch idle CPU < 1% of a core with
5,000 agents, measured after its start-up pass is over; pickup < 200 ms median.

    PYTHONPATH=. python benchmarks/bench_idle_scale.py [--quick]

Homes are made by `holon init` once and copied (agent.json carries each copy's id; registry.json
lists them all, as `holon init` would). `--quick`: 100 and 1,000 agents instead of 3,000 and
10,000, 500 instead of 5,000.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from interleave import absolute, cpu, holon_exe, line, pairs, ratio, ratios, scratch  # noqa: E402

INIT_TARGET_AT, HOUR_TARGET_AT = 3_000, 10_000  # the agent counts the targets speak of


def make_homes(holon_home: Path, n: int) -> list[Path]:
    """`n` agent homes under holon_home/agents, copies of one `holon init`, all registered."""
    env = dict(os.environ, HOLON_HOME=str(holon_home), PYTHONPATH=str(REPO))
    subprocess.run(
        [*holon_exe(), "init", "--agent-id", "a00000"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    agents = holon_home / "agents"
    first = agents / "a00000"
    files = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
    dirs = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_dir())
    ident = json.loads((first / ".holon" / "agent.json").read_text())
    homes = [first]
    for i in range(1, n):
        root = agents / f"a{i:05d}"
        root.mkdir(mode=0o700)
        for d in dirs:
            (root / d).mkdir(mode=0o700)
        for rel, data in files.items():
            if rel.name == "agent.json":
                data = json.dumps({**ident, "agent_id": root.name}).encode()
            (root / rel).write_bytes(data)
            os.chmod(root / rel, 0o600)
        homes.append(root)
    registry = {"schema_version": 1, "agents": {h.name: str(h) for h in homes}}
    (holon_home / "registry.json").write_text(json.dumps(registry))
    return homes


def settled(env: dict) -> None:
    """Two passes, the second more than SETTLE_S after the homes were made: the index is built
    and its record trusted, so the timed runs are the steady state."""
    subprocess.run([*holon_exe(), "tick", "--all"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(2.2)
    subprocess.run([*holon_exe(), "tick", "--all"], env=env, stdout=subprocess.DEVNULL)


def tick_all(tmp: Path, counts: list[int], n: int) -> None:
    solo = tmp / "solo"
    make_homes(solo, 1)
    solo_env = dict(os.environ, HOLON_HOME=str(solo), PYTHONPATH=str(REPO))
    idle = lambda: cpu([*holon_exe(), "tick", "a00000"], solo_env)  # noqa: E731
    for count in counts:
        at_scale(tmp / f"h{count}", count, n, idle)


def at_scale(where: Path, count: int, n: int, idle) -> None:
    """The steady `tick --all`, the one after an init, the periodic full pass and their mix."""
    env = dict(os.environ, HOLON_HOME=str(where), PYTHONPATH=str(REPO))
    make_homes(where, count)
    settled(env)
    every = [*holon_exe(), "tick", "--all"]
    steady = pairs(lambda: cpu(every, env), idle, n)
    ratio(
        f"`tick --all` over {count:,} idle agents", steady, 2.0 if count >= HOUR_TARGET_AT else None
    )
    made = pairs(lambda: after_init(env), idle, n)
    target = 2.0 if count >= INIT_TARGET_AT else None
    ratio("  the next `tick --all` after one `holon init`", made, target)
    full = pairs(lambda: periodic(where, env), idle, max(3, n // 3), warmup=0)
    ratio(f"  the periodic full pass over {count:,}", full, None)
    hour(count, made, full)


def after_init(env: dict) -> float:
    """CPU of the `tick --all` that follows one `holon init` (the init itself is not counted)."""
    agent = f"n{time.time_ns()}"
    subprocess.run([*holon_exe(), "init", "--agent-id", agent], env=env, stdout=subprocess.DEVNULL)
    return cpu([*holon_exe(), "tick", "--all"], env)


def periodic(where: Path, env: dict) -> float:
    """CPU of the periodic full pass: the pass record made FULL_PASS_EVERY_S older first."""
    from holon.home.dueindex import FULL_PASS_EVERY_S

    record = where / "due" / ".scan.json"
    doc = json.loads(record.read_text())
    doc["full_pass_at"] -= FULL_PASS_EVERY_S
    record.write_text(json.dumps(doc))
    return cpu([*holon_exe(), "tick", "--all"], env)


def hour(count: int, made: list, full: list) -> None:
    """Cron every minute with an agent created every minute: 9 passes after an init and 1
    periodic full pass per 10 minutes, as a ratio to an idle tick (medians, min-max)."""
    m, f = ratios(made), ratios(full)
    mix = lambda a, b: (9 * a + b) / 10  # noqa: E731
    target = 1.5 if count >= HOUR_TARGET_AT else None
    line(
        f"  cron: an init a minute, full pass every 10 min ({count:,})",
        " " * 24,
        mix(statistics.median(m), statistics.median(f)),
        mix(min(m), min(f)),
        mix(max(m), max(f)),
        target,
        "x",
    )


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def watch(tmp: Path, count: int, window: float, pickups: int) -> None:
    where = tmp / f"w{count}"
    script = tmp / "script.jsonl"
    script.write_text('{"text": "ok"}\n' * (pickups + 2))
    env = dict(
        os.environ, HOLON_HOME=str(where), PYTHONPATH=str(REPO), HOLON_MODEL=f"scripted/{script}"
    )
    homes = make_homes(where, count)
    settled(env)
    proc = subprocess.Popen(
        [*holon_exe(), "watch", "--all", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        warm = quiet(proc.pid)
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        time.sleep(window)
        share = (cpu_s(proc.pid) - c0) / (time.monotonic() - t0) * 100
        absolute(
            f"`watch --all` idle CPU, {count:,} agents ({warm:.0f} s warm-up)", [share], 1.0, " %"
        )
        latencies = [pickup(env, homes[len(homes) // 2], i) * 1000 for i in range(pickups)]
        absolute(f"`watch --all` pickup, {count:,} agents", latencies, 200.0)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def quiet(pid: int, limit: float = 120.0) -> float:
    """Wait until the watcher's start-up (its first full pass) is over: two 1 s windows in a
    row under 2% of a core. Returns the seconds it took."""
    t0 = time.monotonic()
    calm = 0
    while calm < 2 and time.monotonic() - t0 < limit:
        c0 = cpu_s(pid)
        time.sleep(1.0)
        calm = calm + 1 if cpu_s(pid) - c0 < 0.02 else 0
    return time.monotonic() - t0


def pickup(env: dict, root: Path, i: int) -> float:
    """Enqueue one message (in a child, as `holon enqueue` would) and wait for its
    message_processing_started event: seconds from the enqueue's admission to turn start."""
    events = root / ".holon" / "ledger" / "events.jsonl"
    out = subprocess.run(
        [*holon_exe(), "enqueue", str(root), "--kind", "system_tick", "--text", f"q{i}", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    message_id = json.loads(out)["id"]
    deadline = time.monotonic() + 30
    admitted = started = None
    while time.monotonic() < deadline and started is None:
        for raw in events.read_text().splitlines():
            ev = json.loads(raw)
            if (ev.get("data") or {}).get("message_id") != message_id:
                continue
            at = datetime.fromisoformat(ev["created_at"].replace("Z", "+00:00")).timestamp()
            if ev["kind"] == "message_admitted":
                admitted = at
            elif ev["kind"] == "message_processing_started":
                started = at
        time.sleep(0.02)
    if admitted is None or started is None:
        raise SystemExit(f"message {message_id} was not picked up within 30 s")
    time.sleep(0.3)  # let the turn settle before the next one
    return started - admitted


def main() -> int:
    quick = "--quick" in sys.argv
    with scratch("holon-bench-idle-") as tmp:
        counts = [1, 100, 1_000] if quick else [1, INIT_TARGET_AT, HOUR_TARGET_AT]
        tick_all(tmp, counts, 3 if quick else 9)
        for count in (1, 500) if quick else (1, 5_000):
            watch(tmp, count, window=5.0 if quick else 30.0, pickups=3 if quick else 9)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Idle cost at scale: `holon tick --all` over 1, 1,000 and 10,000 idle agents vs one idle tick,
and `holon watch --all` idle CPU and pickup latency (enqueue -> turn start) at 1 and 5,000 agents.

Targets (docs/architecture.md section 13): `tick --all` over 10,000 idle agents <= 2x one idle
tick; watch idle CPU < 1% of a core with 5,000 agents; pickup < 200 ms median.

    PYTHONPATH=. python benchmarks/bench_idle_scale.py [--quick]

Homes are made by `holon init` once and copied (agent.json carries each copy's id; registry.json
lists them all, as `holon init` would). `--quick`: 100 and 500 agents instead of 10,000 and 5,000.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def holon_exe() -> list[str]:
    script = Path(sys.executable).parent / "holon"
    return [str(script)] if script.exists() else [sys.executable, "-m", "holon"]


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


def timed(cmd: list[str], env: dict, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def line(name: str, value: float, base: float, target: float | None = None) -> None:
    ratio = value / base
    verdict = "" if target is None else f"  (target <= {target}x: "
    verdict += "" if target is None else ("ok)" if ratio <= target else "OVER TARGET)")
    print(f"{name:<48} {value * 1000:8.1f} ms  ratio {ratio:5.2f}x{verdict}", flush=True)


def settled(env: dict) -> None:
    """Two passes, the second more than SETTLE_S after the homes were made: the index is built
    and its record trusted, so the timed runs are the steady state."""
    subprocess.run([*holon_exe(), "tick", "--all"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(2.2)
    subprocess.run([*holon_exe(), "tick", "--all"], env=env, stdout=subprocess.DEVNULL)


def tick_all(tmp: Path, counts: list[int], n: int) -> None:
    base_home = tmp / "solo"
    env = dict(os.environ, HOLON_HOME=str(base_home), PYTHONPATH=str(REPO))
    make_homes(base_home, 1)
    idle = timed([*holon_exe(), "tick", "a00000"], env, n)
    print(f"{'one idle `holon tick AGENT`':<48} {idle * 1000:8.1f} ms", flush=True)
    for count in counts:
        where = tmp / f"h{count}"
        env = dict(os.environ, HOLON_HOME=str(where), PYTHONPATH=str(REPO))
        make_homes(where, count)
        settled(env)
        value = timed([*holon_exe(), "tick", "--all"], env, n)
        target = 2.0 if count >= 10_000 else None
        line(f"`tick --all` over {count:,} idle agents", value, idle, target)
        os.unlink(where / "due" / ".scan.json")
        full = timed([*holon_exe(), "tick", "--all"], env, 1)  # rebuilds the record: once
        line(f"  (a full pass over {count:,}, every 10 min)", full, idle)


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
        time.sleep(3.0)  # startup and its first pass
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        time.sleep(window)
        cpu = (cpu_s(proc.pid) - c0) / (time.monotonic() - t0)
        print(
            f"{f'`watch --all` idle CPU, {count:,} agents':<48} {cpu * 100:8.2f} % of a core"
            f"  (target < 1%: {'ok' if cpu < 0.01 else 'OVER TARGET'})",
            flush=True,
        )
        latencies = [pickup(env, homes[len(homes) // 2], i) for i in range(pickups)]
        med = statistics.median(latencies)
        print(
            f"{f'`watch --all` pickup, {count:,} agents':<48} {med * 1000:8.1f} ms median"
            f" of {pickups} (max {max(latencies) * 1000:.0f} ms; target < 200 ms: "
            f"{'ok' if med < 0.2 else 'OVER TARGET'})",
            flush=True,
        )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


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
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-idle-"))
    try:
        tick_all(tmp, [1, 100, 1_000] if quick else [1, 1_000, 10_000], 3 if quick else 9)
        for count in (1, 500) if quick else (1, 5_000):
            watch(tmp, count, window=4.0 if quick else 10.0, pickups=3 if quick else 9)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

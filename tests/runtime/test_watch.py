"""`holon watch` as a real subprocess: prompt pickup latency, idle CPU, clean exit on SIGTERM."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

from scenario_helpers import init_agent, subprocess_env


def test_watch_processes_message_quickly_and_idles_cheaply(tmp_path):
    home = init_agent()
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "seen"}) + "\n")
    env = subprocess_env(HOLON_MODEL=f"scripted/{script}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "holon", "watch", "a"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.5)  # let it start and settle into waiting
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "holon", "prompt", "a", "hello", "--no-wait"],
            env=env,
            check=True,
        )
        while time.monotonic() - t0 < 5 and home.queue.has_pending():
            time.sleep(0.02)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "seen" not in (
            home.briefs.read_text() if home.briefs.exists() else ""
        ):
            time.sleep(0.02)
        latency = time.monotonic() - t0
        assert latency < 2.0, latency
        ps = _cpu_seconds(proc.pid)
        time.sleep(10)
        idle = _cpu_seconds(proc.pid) - ps
        pct = idle / 10 * 100
        print(f"\nwatch: pickup latency {latency:.2f}s, idle CPU {pct:.2f}% of one core over 10 s")
        assert pct < 1.0
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=10)
    assert code == 0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert after.ru_utime >= before.ru_utime


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks

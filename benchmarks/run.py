"""holon benchmarks: each figure is a ratio against a baseline measured in the same run.

    python benchmarks/run.py [--quick]

Targets (docs/architecture.md section 13): idle tick <= 1.5x `python -c "import click"`;
`transcript --tail 50` on a
1M-entry ledger <= 2x on a 1k ledger; per-round runtime overhead independent of ledger
size (1M vs 1k entries <= 1.2x). Other benchmarks in this directory are run too, among them
bench_idle_scale.py: `tick --all` over 10,000 idle agents <= 2x one idle tick, and `watch`;
bench_context.py (context build at turn 1,000 <= 1.2x turn 100, interleaved) and bench_recall.py
(facts planted early in a long run: visible, found in-turn, found by the CLI, lost).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def holon_exe() -> list[str]:
    script = Path(sys.executable).parent / "holon"
    return [str(script)] if script.exists() else [sys.executable, "-m", "holon"]


def timed(cmd: list[str], env: dict, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def report(name: str, value: float, base: float, target: float) -> None:
    ratio = value / base
    verdict = "ok" if ratio <= target else "OVER TARGET"
    print(
        f"{name:<44} {value * 1000:8.1f} ms  vs {base * 1000:8.1f} ms  ratio {ratio:5.2f}x"
        f"  (target <= {target}x: {verdict})",
        flush=True,
    )


def write_ledger(path: Path, n: int) -> None:
    line = (
        json.dumps(
            {
                "schema_version": 1,
                "id": "tr_0000000000000000",
                "agent_id": "bench",
                "created_at": "2026-01-01T00:00:00.000Z",
                "kind": "note",
                "turn_id": None,
                "message_id": None,
                "data": {"text": "x" * 40},
            }
        )
        + "\n"
    )
    chunk = line * 10_000
    with open(path, "w") as fh:
        for _ in range(n // 10_000):
            fh.write(chunk)
        fh.write(line * (n % 10_000))


def main() -> int:
    quick = "--quick" in sys.argv
    n = 5 if quick else 15
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-"))
    env = dict(os.environ, HOLON_HOME=str(tmp / "home"), PYTHONPATH=str(REPO))
    env.pop("HOLON_MODEL", None)
    os.environ.update(HOLON_HOME=env["HOLON_HOME"])
    try:
        from holon.home.init import init_home

        one = init_home(None, "solo")
        base = timed([sys.executable, "-c", "import click"], env, n)
        idle = timed([*holon_exe(), "tick", "solo"], env, n)
        report("idle `holon tick AGENT`", idle, base, 1.5)
        # `tick --all` at 1, 1,000 and 10,000 agents, and `watch`: bench_idle_scale.py

        small = init_home(None, "small")
        big = init_home(None, "big")
        write_ledger(small.transcript, 1_000)
        write_ledger(big.transcript, 1_000 if quick else 1_000_000)
        t_small = timed([*holon_exe(), "transcript", "small", "--tail", "50", "--jsonl"], env, n)
        t_big = timed([*holon_exe(), "transcript", "big", "--tail", "50", "--jsonl"], env, n)
        report("`transcript --tail 50` 1M vs 1k entries", t_big, t_small, 2.0)
        round_overhead(tmp, small, big, n)
        del one
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for extra in sorted(Path(__file__).parent.glob("bench_*.py")):
        print(f"\n== {extra.name}", flush=True)
        subprocess.run(
            [sys.executable, str(extra), *(["--quick"] if quick else [])],
            check=False,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    return 0


def round_overhead(tmp: Path, small, big, n: int) -> None:
    """In-process: one scripted provider round per turn, on a 1k vs a 1M transcript; and the
    runtime overhead per provider round (target < 10 ms): the marginal cost of a round, from turns
    of 1 and of 3 rounds on the 1k home (the extra rounds call TaskList)."""
    from holon.agent.admission import admit
    from holon.runtime.tick import tick

    script = tmp / "script.jsonl"
    script.write_text('{"text": "ok"}\n' * (4 * n + 4))
    call = {"name": "TaskList", "arguments": {}}
    three = tmp / "three.jsonl"
    with open(three, "w") as fh:
        for i in range(n + 1):
            for r in range(2):
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}{r}"}]}))
                fh.write("\n")
            fh.write(json.dumps({"text": "ok"}) + "\n")

    def per_turn(home, model: str) -> float:
        samples = []
        for i in range(n + 1):
            admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": f"q{i}"})
            t0 = time.perf_counter()
            tick(home, model=model)
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples[1:])

    results = {home.agent_id: per_turn(home, f"scripted/{script}") for home in (small, big)}
    print(
        f"{'per-turn runtime overhead (1 scripted round)':<44} {results['small'] * 1000:8.1f} ms "
        "(1k entries)"
    )
    report("per-turn overhead 1M vs 1k transcript", results["big"], results["small"], 1.2)
    per_round = (per_turn(small, f"scripted/{three}") - results["small"]) / 2
    verdict = "ok" if per_round < 0.010 else "OVER TARGET"
    print(
        f"{'runtime overhead per provider round':<44} {per_round * 1000:8.1f} ms"
        f"  (target < 10 ms: {verdict}; more in bench_rounds.py)",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())

"""Lighter rounds and a light admission path.

- runtime overhead per provider round with the scripted provider (target < 10 ms): the marginal
  cost of a round, from turns of 1 and of 5 rounds (each extra round calls TaskList), and the
  whole one-round turn; with the state writes and fsyncs per turn;
- enqueues per second from separate processes (target >= 20/s): `holon enqueue` and
  `holon prompt --no-wait`, one after another and 4 at a time; and many in one process with
  `holon enqueue AGENT --jsonl -` (target >= 10x the one-process-per-message rate);
- `holon status --json` against an idle `holon tick` (informational).

Run: PYTHONPATH=. python benchmarks/bench_rounds.py [--quick]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ROUND_TARGET_MS = 10.0
ENQUEUE_TARGET = 20.0  # per second


def holon_cmd() -> list[str]:
    """What the installed `holon` script runs (`python -m holon` would add runpy's imports)."""
    return [sys.executable, "-c", "import sys; from holon.cli.entry import main; sys.exit(main())"]


class Counter:
    """State writes and fsyncs made in this process while counting."""

    def __init__(self) -> None:
        self.fsyncs = 0
        self.state_writes = 0
        real_fsync, real_open = os.fsync, os.open

        def fsync(fd: int) -> None:
            self.fsyncs += 1
            real_fsync(fd)

        def open_(path, flags, *args, **kw):  # noqa: ANN001 (os.open's own signature)
            if os.path.basename(str(path)).startswith(".state.json.tmp."):
                self.state_writes += 1
            return real_open(path, flags, *args, **kw)

        os.fsync, os.open = fsync, open_  # type: ignore[assignment]


def turns(home, script: Path, n: int, rounds: int, counter: Counter) -> dict[str, float]:
    from holon.agent.admission import admit, text_body
    from holon.runtime.tick import tick

    call = {"name": "TaskList", "arguments": {}}
    with open(script, "w") as fh:
        for i in range(n + 1):
            for r in range(rounds - 1):
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}_{r}"}]}))
                fh.write("\n")
            fh.write(json.dumps({"text": f"done {i}"}) + "\n")
    wall, cpu = [], []
    fsyncs = writes = 0
    for i in range(n + 1):
        admit(home, "cli_prompt", "operator_prompt", text_body(f"q{i}"))
        f0, w0 = counter.fsyncs, counter.state_writes
        t0, c0 = time.perf_counter(), time.process_time()
        tick(home, model=f"scripted/{script}")
        if i:  # the first turn imports the runtime
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            fsyncs += counter.fsyncs - f0
            writes += counter.state_writes - w0
    return {
        "wall": statistics.median(wall) * 1000,
        "cpu": statistics.median(cpu) * 1000,
        "fsyncs": fsyncs / n,
        "writes": writes / n,
    }


def round_overhead(tmp: Path, n: int) -> None:
    from holon.home.init import init_home

    counter = Counter()
    one = turns(init_home(None, "one"), tmp / "one.jsonl", n, 1, counter)
    five = turns(init_home(None, "five"), tmp / "five.jsonl", n, 5, counter)
    per_round = (five["wall"] - one["wall"]) / 4
    per_round_cpu = (five["cpu"] - one["cpu"]) / 4
    verdict = "ok" if per_round < ROUND_TARGET_MS else "OVER TARGET"
    print(
        f"{'runtime overhead per provider round':<40} {per_round:7.1f} ms wall "
        f"({per_round_cpu:.1f} ms CPU)  (target < {ROUND_TARGET_MS:g} ms: {verdict})"
    )
    verdict = "ok" if one["wall"] < ROUND_TARGET_MS else "over"
    print(
        f"{'one-round turn, whole':<40} {one['wall']:7.1f} ms wall ({one['cpu']:.1f} ms CPU)  "
        f"(< {ROUND_TARGET_MS:g} ms: {verdict}; fsyncs dominate the rest)"
    )
    for name, figures in (("1-round turn", one), ("5-round turn", five)):
        print(
            f"{name + ': per turn':<40} {figures['writes']:5.1f} state.json writes, "
            f"{figures['fsyncs']:5.1f} fsyncs"
        )


def rate(cmd_of, n: int, parallel: int) -> float:
    """Processes per second running `cmd_of(i)` for i < n, `parallel` at a time."""

    def one(i: int) -> None:
        subprocess.run(cmd_of(i), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, range(n)))
    return n / (time.perf_counter() - t0)


def admission(n: int) -> None:
    enqueue = [*holon_cmd(), "enqueue", "adm", "--kind", "channel_event", "--text"]
    prompt = [*holon_cmd(), "prompt", "adm"]
    base = rate(lambda i: [sys.executable, "-c", "import click"], n, 1)
    label = 'baseline `python -c "import click"`'
    print(f"{label:<40} {base:7.1f} /s")
    for name, cmd_of in (
        ("holon enqueue", lambda i: [*enqueue, f"e{i}"]),
        ("holon prompt --no-wait", lambda i: [*prompt, f"p{i}", "--no-wait"]),
    ):
        for parallel in (1, 4):
            r = rate(cmd_of, n, parallel)
            verdict = "ok" if r >= ENQUEUE_TARGET else "UNDER TARGET"
            print(
                f"{name + f', {parallel} at a time':<40} {r:7.1f} /s  "
                f"(target >= {ENQUEUE_TARGET:g}/s: {verdict})",
                flush=True,
            )


BATCH_TARGET = 10.0  # times the one-process-per-message rate


def batch_admission(n: int) -> None:
    """`holon enqueue AGENT --jsonl -`: n messages in one process, against n processes."""
    single = rate(
        lambda i: [*holon_cmd(), "enqueue", "adm", "--kind", "channel_event", "--text", f"s{i}"],
        max(10, n // 10),
        1,
    )
    lines = "".join(json.dumps({"kind": "channel_event", "text": f"b{i}"}) + "\n" for i in range(n))
    t0 = time.perf_counter()
    subprocess.run(
        [*holon_cmd(), "enqueue", "adm", "--jsonl", "-"],
        input=lines.encode(),
        stdout=subprocess.DEVNULL,
        check=True,
    )
    batch = n / (time.perf_counter() - t0)
    ratio = batch / single
    verdict = "ok" if ratio >= BATCH_TARGET else "UNDER TARGET"
    print(
        f"{f'holon enqueue --jsonl, {n} lines':<40} {batch:7.1f} /s  {ratio:5.1f}x one process "
        f"per message ({single:.1f}/s)  (target >= {BATCH_TARGET:g}x: {verdict})",
        flush=True,
    )


def timed(cmd: list[str], n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def status_vs_tick(n: int) -> None:
    subprocess.run([*holon_cmd(), "init", "--agent-id", "idle"], check=True, capture_output=True)
    idle = timed([*holon_cmd(), "tick", "idle"], n)
    status = timed([*holon_cmd(), "status", "idle", "--json"], n)
    print(
        f"{'`status --json` vs idle `tick`':<40} {status * 1000:7.1f} ms vs {idle * 1000:.1f} ms"
        f"  ratio {status / idle:4.2f}x  (informational)"
    )


def main() -> int:
    quick = "--quick" in sys.argv
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-rounds-"))
    os.environ.update(HOLON_HOME=str(tmp / "home"), PYTHONPATH=str(REPO))
    os.environ.pop("HOLON_MODEL", None)
    # the commands run from compiled modules, as an installed holon does (a source tree run with
    # PYTHONDONTWRITEBYTECODE recompiles every edited module in every process)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        round_overhead(tmp, 10 if quick else 40)
        script = tmp / "adm.jsonl"
        script.write_text('{"text": "ok"}\n')
        subprocess.run([*holon_cmd(), "init", "--agent-id", "adm"], check=True, capture_output=True)
        subprocess.run(
            [*holon_cmd(), "model", "set", "adm", f"scripted/{script}"],
            check=True,
            capture_output=True,
        )
        admission(20 if quick else 50)
        batch_admission(200 if quick else 1000)
        status_vs_tick(5 if quick else 15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

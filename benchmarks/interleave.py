"""Interleaved A/B measurement for the benchmarks: a figure is robust to a loaded machine.

Two things timed one after the other see different loads (another process's burst lands on one
of them); timed in alternation, each pair shares its moment. So:

1. `pairs(a, b, n)` runs one warm-up of each, then n pairs, A first in even pairs and B first in
   odd ones; each call returns seconds (or any cost);
2. `ratio(name, pairs, target)` prints the median of the per-pair ratios A/B, their min and max,
   the target and the verdict; `difference(...)` the same for per-pair differences A-B in ms;
3. `wall(cmd, env)` and `cpu(cmd, env)` time one subprocess (elapsed, or its user+system CPU,
   steadier than elapsed when the machine is shared);
4. `scratch(prefix)` is a temporary directory removed at the end, on an error, Ctrl-C or SIGTERM.

    from interleave import cpu, pairs, ratio
    ratio("tick --all vs idle tick", pairs(lambda: cpu(a, env), lambda: cpu(b, env), 9), 2.0)
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

Pair = tuple[float, float]
WIDTH = 58


def pairs(a: Callable[[], float], b: Callable[[], float], n: int, warmup: int = 1) -> list[Pair]:
    """n (A, B) samples taken in alternation (A first, then B first), after `warmup` of each."""
    for _ in range(warmup):
        a(), b()
    out = []
    for i in range(n):
        if i % 2 == 0:
            x = a()
            y = b()
        else:
            y = b()
            x = a()
        out.append((x, y))
    return out


def ratios(samples: list[Pair]) -> list[float]:
    return [x / y for x, y in samples if y > 0]


def ratio(name: str, samples: list[Pair], target: float | None, unit: float = 1000.0) -> float:
    """Print `name`: A and B (medians, ms), the median per-pair ratio A/B with its min-max, the
    target and the verdict. Returns the median ratio."""
    rs = ratios(samples)
    med = statistics.median(rs)
    a = statistics.median(x for x, _ in samples) * unit
    b = statistics.median(y for _, y in samples) * unit
    line(name, f"{a:8.1f} vs {b:8.1f} ms", med, min(rs), max(rs), target, "x")
    return med


def difference(name: str, samples: list[Pair], target_ms: float | None) -> float:
    """Print the median per-pair difference A-B in ms, with min-max, target and verdict."""
    ds = [(x - y) * 1000 for x, y in samples]
    med = statistics.median(ds)
    a = statistics.median(x for x, _ in samples) * 1000
    b = statistics.median(y for _, y in samples) * 1000
    line(name, f"{a:8.1f} vs {b:8.1f} ms", med, min(ds), max(ds), target_ms, " ms")
    return med


def line(
    name: str, values: str, med: float, low: float, high: float, target: float | None, unit: str
) -> None:
    """One figure: what was compared, the median, its spread, the target and the verdict."""
    verdict = "" if target is None else ("ok" if med <= target else "OVER")
    wanted = "" if target is None else f"target <= {target:g}{unit}"
    spread = f"[{low:.2f}-{high:.2f}]"
    print(
        f"{name:<{WIDTH}} {values}  {med:7.2f}{unit} {spread:<15} {wanted:<16} {verdict}",
        flush=True,
    )


def absolute(name: str, samples: list[float], target: float | None, unit: str = " ms") -> float:
    """A figure that is not a ratio (a latency, a CPU share): median, min-max, target, verdict."""
    med = statistics.median(samples)
    line(name, f"{len(samples):3d} samples", med, min(samples), max(samples), target, unit)
    return med


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Elapsed seconds of one run of `cmd` (output discarded)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def cpu(cmd: list[str], env: dict[str, str]) -> float:
    """User+system CPU seconds of one run of `cmd` (output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary directory, removed however the benchmark ends (SIGTERM included)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    old = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _exit)
    try:
        yield path
    finally:
        signal.signal(signal.SIGTERM, old)
        shutil.rmtree(path, ignore_errors=True)


def _exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def holon_exe() -> list[str]:
    """The `holon` command of this Python, else `python -m holon`."""
    import sys

    script = Path(sys.executable).parent / "holon"
    return [str(script)] if script.exists() else [sys.executable, "-m", "holon"]


def left_in(directory: str | os.PathLike) -> list[str]:
    """What a benchmark left in `directory` (its TMPDIR), for run.py to report and remove."""
    try:
        return sorted(os.listdir(directory))
    except FileNotFoundError:
        return []

"""ExecCommand of `true` (in-process via registry.call) against a raw `sh -c true`, and the
default sandbox against no sandbox, each pair timed interleaved in one run.

Targets: ExecCommand <= 2 x raw + 15 ms; the default sandbox (workspace-write, network denied,
with its mount namespace) adds under 5 ms to an unconfined ExecCommand. Every figure is the
median over N pairs, each pair run back to back in alternating order (A B, B A, ...), so load
that comes and goes weighs on both sides alike; min and max of the per-pair figure show the
spread. Each sandbox line also gives the CPU time a call adds (this process and its children),
which load does not stretch as it stretches wall time. The agent lives in a temporary
$HOLON_HOME (so the sandbox hides it, as for a real agent), and HOME points there too: nothing
is left behind.

Run: PYTHONPATH=. python benchmarks/bench_exec.py [N] [--quick]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

SANDBOX_TARGET_MS = 5.0


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def cpu_ms() -> float:
    """CPU time of this process and its reaped children: what load does not stretch."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


def pairs(a: Callable[[], object], b: Callable[[], object], n: int) -> list[tuple[float, float]]:
    """n (a, b) timings in ms, run back to back in alternating order, after one warm-up each."""
    a(), b()
    out = []
    for i in range(n):
        if i % 2:
            tb = timed(b)
            ta = timed(a)
        else:
            ta = timed(a)
            tb = timed(b)
        out.append((ta, tb))
    return out


def spread(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):+.2f} (min {min(values):+.2f}, max {max(values):+.2f})"
    )


def main(n: int) -> int:
    tmp = tempfile.mkdtemp(prefix="holon-bench-exec-")
    saved = {k: os.environ.get(k) for k in ("HOLON_HOME", "HOME")}
    os.environ.update(HOLON_HOME=os.path.join(tmp, "holon"), HOME=os.path.join(tmp, "user"))
    try:
        os.makedirs(os.environ["HOME"])
        return run(n)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(tmp, ignore_errors=True)


def run(n: int) -> int:
    from holon.agent.handle import Agent
    from holon.home.init import init_home
    from holon.tools import registry
    from holon.tools.base import ToolContext

    home = init_home(None, "bench")
    ctx = ToolContext(agent=Agent(home), execution_root=home.root, cwd=home.root)

    def exec_true(login: bool = False) -> Callable[[], None]:
        def call() -> None:
            env = registry.call(ctx, "ExecCommand", {"cmd": "true", "login": login}).envelope
            assert env["result"]["exit_status"] == 0, env

        return call

    def raw(argv: list[str]) -> Callable[[], object]:
        return lambda: subprocess.run(argv, check=True)

    plain = pairs(raw(["sh", "-c", "true"]), exec_true(), n)
    over = [e - 2 * r for r, e in plain]
    ok = statistics.median(over) <= 15
    print(
        f"ExecCommand true (login=false) vs sh -c true, {n} interleaved pairs: "
        f"{statistics.median([e for _, e in plain]):.2f} ms vs "
        f"{statistics.median([r for r, _ in plain]):.2f} ms, ratio "
        f"{statistics.median([e / r for r, e in plain]):.2f}x; ExecCommand - 2 x raw "
        f"{spread(over)} ms; target <= 15 ms: {'OK' if ok else 'MISS'}"
    )
    login = pairs(raw(["bash", "-lc", "true"]), exec_true(login=True), n)
    print(
        f"ExecCommand true (login=true) vs bash -lc true: "
        f"{spread([e - r for r, e in login])} ms (the login environment is captured once)"
    )
    return 0 if sandbox_overhead(ctx, exec_true(), n) and ok else 1


def sandbox_overhead(ctx, call: Callable[[], None], n: int) -> bool:
    """The same ExecCommand unconfined and in each sandbox mode, interleaved pair by pair."""
    from holon.sandbox import landlock, policy

    home = ctx.home
    real_abi = landlock.abi()

    def unconfined() -> None:
        # full-access without Landlock: what a kernel without it runs (the capabilities are
        # dropped all the same)
        landlock._abi = 0
        try:
            call()
        finally:
            landlock._abi = real_abi

    bare = policy.Policy("full-access", "allow")
    results = {}
    for label, chosen in (
        ("workspace-write (default)", None),
        ("read-only", policy.Policy("read-only")),
        ("full-access (ns+landlock)", bare),
    ):
        results[label] = paired_modes(home, bare, chosen, unconfined, call, n)
    for label, (timings, cpu) in results.items():
        ratio = statistics.median(b / a for a, b in timings)
        print(
            f"sandbox {label:<26} adds {spread([b - a for a, b in timings])} ms over "
            f"unconfined ({statistics.median(a for a, _ in timings):.2f} ms), ratio {ratio:.2f}x; "
            f"CPU {statistics.mean(b - a for a, b in cpu):+.2f} ms a call"
        )
    added = statistics.median(b - a for a, b in results["workspace-write (default)"][0])
    ok = added < SANDBOX_TARGET_MS
    print(
        f"the default sandbox adds {added:+.2f} ms (median of {n} interleaved pairs); "
        f"target < {SANDBOX_TARGET_MS:.0f} ms: {'OK' if ok else 'MISS'}"
    )
    return ok


Pairs = list[tuple[float, float]]


def paired_modes(home, bare, chosen, unconfined, call, n: int) -> tuple[Pairs, Pairs]:
    """Per pair: (the unconfined ExecCommand, the one in mode `chosen`), wall time and CPU time
    (this process and its children, which load does not stretch), in ms. The policy file each
    side needs is written before its timed call."""
    from holon.sandbox import policy

    def set_policy(p) -> None:
        if p is None:
            home.sandbox_json.unlink(missing_ok=True)
        else:
            policy.write(home, p)

    wall, cpu = [], []
    for i in range(n + 1):
        order = [(bare, unconfined), (chosen, call)]
        if i % 2:
            order.reverse()
        times, used = {}, {}
        for p, fn in order:
            set_policy(p)
            before = cpu_ms()
            times[fn is call] = timed(fn)
            used[fn is call] = cpu_ms() - before
        if i:  # the first pair warms up
            wall.append((times[False], times[True]))
            cpu.append((used[False], used[True]))
    return wall, cpu


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--quick"]  # run.py passes --quick: fewer samples
    sys.exit(main(int(args[0]) if args else (15 if "--quick" in sys.argv else 40)))

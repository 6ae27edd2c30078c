"""ExecCommand of `true` (in-process via registry.call, best of N) vs raw
subprocess.run(["sh","-c","true"]).

Target: ExecCommand <= 2 x raw + 15 ms. Run: PYTHONPATH=. python benchmarks/bench_exec.py [N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1000


def main(n: int = 30) -> int:
    from holon.agent.handle import Agent
    from holon.home.layout import Home
    from holon.tools import registry
    from holon.tools.base import ToolContext

    home = Path(tempfile.mkdtemp(prefix="holon-bench-"))
    ctx = ToolContext(agent=Agent(Home(home, "bench")), execution_root=home, cwd=home)
    raw = best(lambda: subprocess.run(["sh", "-c", "true"]), n)
    results = {}
    for login in (False, True):
        env = registry.call(
            ctx, "ExecCommand", {"cmd": "true", "login": login}
        ).envelope  # warm imports
        assert env["result"]["exit_status"] == 0
        results[login] = best(
            lambda login=login: registry.call(ctx, "ExecCommand", {"cmd": "true", "login": login}),
            n,
        )
    raw_login = best(lambda: subprocess.run(["bash", "-lc", "true"]), n)
    target = 2 * raw + 15
    print(f"raw subprocess.run(['sh','-c','true'])  best of {n}: {raw:.2f} ms")
    print(
        f"ExecCommand true (login=false)           best of {n}: {results[False]:.2f} ms ratio "
        f"{results[False] / raw:.2f}x; target <= {target:.2f} ms: "
        f"{'OK' if results[False] <= target else 'MISS'}"
    )
    print(f"raw subprocess.run(['bash','-lc','true']) best of {n}: {raw_login:.2f} ms")
    print(
        f"ExecCommand true (login=true, default)  best of {n}: {results[True]:.2f} ms "
        f"(login shell startup dominates; vs bash -lc: +{results[True] - raw_login:.2f} ms)"
    )
    return 0 if results[False] <= target else 1


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--quick"]  # run.py passes --quick: fewer samples
    sys.exit(main(int(args[0]) if args else (10 if "--quick" in sys.argv else 30)))

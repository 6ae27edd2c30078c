"""Benchmark: ApplyPatch (in process) vs `git apply` (subprocess) on a 50,000-line file and a
200-hunk patch.

Run from a checkout: `python benchmarks/bench_apply_patch.py [--runs N]`. Prints the best time of
each, measured in the same run, and the ratio against the target (ApplyPatch <= 3x git apply).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tools.base import ToolContext
from holon.tools.registry import call

LINES = 50_000
HUNKS = 200
TARGET = 3.0


def build(work: Path) -> tuple[bytes, bytes, str]:
    before = [f"line {i}: value = compute({i % 997}, {i * 7 % 1000})\n" for i in range(LINES)]
    after = list(before)
    step = LINES // HUNKS
    for k in range(HUNKS):
        i = k * step + step // 2
        after[i] = f"line {i}: value = changed({k})\n"
    (work / "before.txt").write_text("".join(before))
    (work / "after.txt").write_text("".join(after))
    diff = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "before.txt", "after.txt"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    body = diff[diff.index("\n@@") + 1 :]
    return (
        "".join(before).encode(),
        "".join(after).encode(),
        "--- a/big.txt\n+++ b/big.txt\n" + body,
    )


def best_of(runs: int, reset, action) -> float:
    times = []
    for _ in range(runs):
        reset()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 7")
    parsed = parser.parse_args()
    runs = 3 if parsed.quick and parsed.runs == 7 else parsed.runs
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        before, after, patch = build(work)
        drifted = re.sub(
            r"^@@ -(\d+)", lambda m: f"@@ -{int(m[1]) + 40}", patch, flags=re.MULTILINE
        )
        (work / "patch.diff").write_text(patch)
        target = work / "big.txt"
        ctx = ToolContext(agent=Agent(Home(work, "bench")), execution_root=work, cwd=work)

        def holon(text: str):
            def run() -> None:
                outcome = call(ctx, "ApplyPatch", {"patch": text})
                assert outcome.envelope["status"] == "success", outcome.rendered

            return run

        def git_apply() -> None:
            subprocess.run(["git", "apply", "patch.diff"], cwd=work, check=True)

        def reset() -> None:
            target.write_bytes(before)

        results = {}
        for name, action in (
            ("ApplyPatch", holon(patch)),
            ("ApplyPatch, hints off by 40", holon(drifted)),
            ("git apply", git_apply),
        ):
            results[name] = best_of(runs, reset, action)
            assert target.read_bytes() == after, f"{name} produced the wrong file"
    ratio = results["ApplyPatch"] / results["git apply"]
    print(f"{LINES} lines, {HUNKS} hunks, best of {runs}:")
    for name, seconds in results.items():
        print(f"  {name:<28} {seconds * 1000:8.2f} ms")
    print(
        f"  ratio ApplyPatch / git apply: {ratio:.2f}x (target <= {TARGET:.0f}x: "
        f"{'met' if ratio <= TARGET else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

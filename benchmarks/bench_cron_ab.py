"""The cron mix of bench_idle_scale.py for two versions of holon, interleaved in one run: this
checkout against REV (default `main`), on one home of idle agents.

For each version: the `tick --all` after one `holon init`, the periodic full pass, each as a
ratio to that version's idle tick, and their mix under cron every minute with an agent created
every minute (9 passes after an init, 1 full pass per 10 minutes; target <= 1.5x at 10,000).
The versions alternate within every round, so a burst of load falls on both.

    PYTHONPATH=. python benchmarks/bench_cron_ab.py [REV] [--agents N] [--rounds K]

REV is exported with `git archive` into the scratch directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_idle_scale import after_init, hour, make_homes, periodic, settled  # noqa: E402
from interleave import cpu, holon_exe, pairs, ratio, scratch  # noqa: E402


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` of this repository, unpacked under `into`."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="main")
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with scratch("holon-bench-cron-ab-") as tmp:
        code = {args.rev: export(args.rev, tmp / "rev"), "this checkout": REPO}
        where, solo = tmp / "home", tmp / "solo"
        make_homes(solo, 1)
        make_homes(where, args.agents)
        env = {
            v: dict(os.environ, HOLON_HOME=str(where), PYTHONPATH=str(c)) for v, c in code.items()
        }
        solo_env = {v: {**e, "HOLON_HOME": str(solo)} for v, e in env.items()}
        settled(env["this checkout"])
        idle = {
            v: (lambda e=e: cpu([*holon_exe(), "tick", "a00000"], e)) for v, e in solo_env.items()
        }
        made = alternate(code, args.rounds, lambda v: after_init(env[v]), idle)
        for v in code:  # the first periodic pass of each version after the inits: not timed
            periodic(where, env[v])
        full = alternate(code, args.rounds, lambda v: periodic(where, env[v]), idle)
        for v in code:
            print(f"{v}:")
            ratio(
                f"  the next `tick --all` after one `holon init` ({args.agents:,})", made[v], None
            )
            ratio(f"  the periodic full pass over {args.agents:,}", full[v], None)
            hour(args.agents, made[v], full[v])
    return 0


def alternate(code: dict, rounds: int, run, idle: dict) -> dict[str, list]:
    """`rounds` (run(v), idle tick of v) pairs per version, the versions taking turns first."""
    out: dict[str, list] = {v: [] for v in code}
    order = list(code)
    for i in range(rounds):
        for v in order if i % 2 == 0 else order[::-1]:
            out[v] += pairs(lambda v=v: run(v), idle[v], 1, warmup=0)
    return out


if __name__ == "__main__":
    raise SystemExit(main())

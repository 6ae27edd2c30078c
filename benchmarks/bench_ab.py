"""run.py's own figures for two versions of holon, interleaved in one run: this checkout
against REV, each with PYTHONPATH at its own tree, on homes built alike (each version inits
its own; the same ledgers written into both).

Per figure: REV's median, this checkout's, the median of the per-pair ratios this/REV with
their min-max, and the verdict "no worse" when that median is <= 1.05. The figures: an idle
`holon tick AGENT` and `transcript --tail 50` on 1k and 1M-entry ledgers (CPU time of the
subprocess); a turn of one scripted round on 1k and 1M-entry ledgers, and the runtime overhead
per provider round on 1k (half a 3-round turn minus a 1-round turn), timed in CPU inside a
subprocess of its version after an untimed turn there (run.turn, warm): a sample is the
median of TURNS turns (or couples of turns) in one process.

    PYTHONPATH=. python benchmarks/bench_ab.py [REV] [--pairs N] [--entries M] [--quick]
        [--against REV2]

REV (default `main`, as when run.py runs it) is exported with `git archive` into the scratch
directory, removed at the end; so is REV2, timed in place of this checkout when given (one
merge against its first parent, say).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_cron_ab import export  # noqa: E402
from interleave import WIDTH, cpu, holon_exe, pairs, ratios, scratch  # noqa: E402
from run import scripts, write_ledger  # noqa: E402

NO_WORSE = 1.05
TURNS = 5  # timed turns per sample of a turn figure (one process), their median the sample
INIT = """import sys
from holon.home.init import init_home
for a in sys.argv[1:]:
    h = init_home(None, a)
    print(a, h.root, h.transcript)"""


def main() -> int:
    if sys.argv[1:2] == ["--turn"]:
        return worker(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", nargs="?", default="main")
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--entries", type=int, default=1_000_000, help="the big ledger's")
    parser.add_argument("--quick", action="store_true", help="5 pairs, a 10k big ledger")
    parser.add_argument("--against", help="a revision to time in place of this checkout")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.entries = 5, 10_000
    n = args.pairs
    with scratch("holon-bench-ab-") as tmp:
        this = export(args.against, tmp / "this") if args.against else REPO
        sides = {"rev": export(args.rev, tmp / "rev"), "this": this}
        env = {
            side: setup(tree, tmp / f"home-{side}", args.entries) for side, tree in sides.items()
        }
        one, many = scripts(tmp, TURNS * n)
        title = f"{args.against or 'this checkout'} vs {args.rev}"
        print(f"{title:<{WIDTH}} {'REV':>8}  {'this':>8}  this/REV")
        tick = [*holon_exe(), "tick", "solo"]
        compare("idle `holon tick AGENT` (CPU)", n, lambda s: cpu(tick, env[s]))
        tail = [*holon_exe(), "transcript", "--tail", "50", "--jsonl"]
        for agent, size in (("small", "1,000"), ("big", f"{args.entries:,}")):
            compare(
                f"`transcript --tail 50`, {size} entries (CPU)",
                n,
                lambda s, a=agent: cpu([*tail, a], env[s]),
            )
        for agent, size in (("small", "1,000"), ("big", f"{args.entries:,}")):
            compare(
                f"turn of one round, {size} entries (CPU)",
                n,
                lambda s, a=agent: statistics.median(
                    turns(sides[s], env[s], a, one, *[one] * TURNS)
                ),
            )

        def per_round(s: str) -> float:
            t = turns(sides[s], env[s], "small", one, *[many, one] * TURNS)
            return statistics.median((t[i] - t[i + 1]) / 2 for i in range(0, len(t), 2))

        compare("runtime overhead per provider round, 1,000 entries (CPU)", n, per_round)
    return 0


def setup(tree: Path, home: Path, entries: int) -> dict[str, str]:
    """The environment of one version: its own HOLON_HOME with agents solo, small (a 1k ledger)
    and big (`entries`), made by that version's init; BENCH_AB_<agent> is its root."""
    env = dict(os.environ, HOLON_HOME=str(home), PYTHONPATH=str(tree))
    env.pop("HOLON_MODEL", None)
    cmd = [sys.executable, "-c", INIT, "solo", "small", "big"]
    made = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    for agent, root, transcript in (row.split() for row in made.splitlines()):
        env[f"BENCH_AB_{agent}"] = root
        if agent != "solo":
            write_ledger(Path(transcript), 1_000 if agent == "small" else entries)
    return env


def turns(tree: Path, env: dict[str, str], agent: str, warm: str, *models: str) -> list[float]:
    """CPU seconds of a turn of `agent` by each of `models`, by the version at `tree` in one
    subprocess, after an untimed turn by `warm` there (run.py times warm turns in one process)."""
    root = env[f"BENCH_AB_{agent}"]
    cmd = [sys.executable, __file__, "--turn", str(tree), root, agent, warm, *models]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"a turn by {tree} failed:\n{done.stderr[-2000:]}")
    return [float(x) for x in done.stdout.split()]


def worker(tree: str, root: str, agent: str, warm: str, *models: str) -> int:
    """`--turn`: run.turn by `warm`, then one timed by each of `models`, with holon imported
    from `tree` (ahead of REPO on sys.path)."""
    import time

    from run import turn as one_turn

    sys.path.insert(0, tree)
    from holon.home.layout import Home

    if not sys.modules["holon"].__file__.startswith(tree):
        raise SystemExit(f"holon came from {sys.modules['holon'].__file__}, not {tree}")

    home = Home(root, agent)
    one_turn(home, warm)
    print(*(one_turn(home, model, clock=time.process_time) for model in models))
    return 0


def compare(name: str, n: int, measure) -> None:
    """n pairs (this, REV) in alternation; one line: the medians, ratio, min-max, verdict."""
    samples = pairs(lambda: measure("this"), lambda: measure("rev"), n)
    rs = ratios(samples)
    med = statistics.median(rs)
    this = statistics.median(x for x, _ in samples) * 1000
    rev = statistics.median(y for _, y in samples) * 1000
    verdict = "no worse" if med <= NO_WORSE else "WORSE"
    spread = f"[{min(rs):.2f}-{max(rs):.2f}]"
    print(
        f"{name:<{WIDTH}} {rev:8.1f}  {this:8.1f} ms  {med:5.2f}x {spread:<13} {verdict}",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())

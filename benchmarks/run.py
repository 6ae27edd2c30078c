"""holon benchmarks: each figure compares A with a baseline B measured in alternation in the same
run (benchmarks/interleave.py): the median of per-pair ratios, their min-max, target, verdict.

    python benchmarks/run.py [--quick]

Targets (docs/architecture.md section 13): idle tick <= 1.5x `python -c "import click"`;
`transcript --tail 50` on a 1M-entry ledger <= 2x on a 1k ledger; per-round runtime overhead
independent of ledger size (1M vs 1k entries <= 1.2x). Subprocess figures are CPU time (user +
system), steadier than elapsed time on a shared machine. Then each benchmark of SUBBENCHMARKS
runs with its own TMPDIR, removed after it (what it left there is reported). Among them:
bench_idle_scale.py (`tick --all` over 10,000 idle agents <= 2x one idle tick, and `watch`),
bench_context.py (context build at turn 1,000 <= 1.2x turn 100, interleaved) and bench_recall.py
(facts planted early in a long run: visible, found in-turn, found by the CLI, lost).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from interleave import absolute, cpu, holon_exe, left_in, pairs, ratio, scratch  # noqa: E402

# the other benchmarks, in the order they run: one line each
SUBBENCHMARKS = (
    "bench_idle_scale.py",  # tick --all at scale, the pass after an init, watch CPU and pickup
    "bench_rounds.py",
    "bench_exec.py",
    "bench_apply_patch.py",
    "bench_patch_grammar.py",
    "bench_patch_corpus.py",
    "bench_context.py",
    "bench_memory.py",
    "bench_retention.py",
    "bench_recall.py",  # facts planted early in a long run: visible, found, lost
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
    with scratch("holon-bench-") as tmp:
        env = dict(os.environ, HOLON_HOME=str(tmp / "home"), PYTHONPATH=str(REPO))
        env.pop("HOLON_MODEL", None)
        os.environ.update(HOLON_HOME=env["HOLON_HOME"])
        from holon.home.init import init_home

        init_home(None, "solo")
        click = [sys.executable, "-c", "import click"]
        tick = [*holon_exe(), "tick", "solo"]
        samples = pairs(lambda: cpu(tick, env), lambda: cpu(click, env), n)
        ratio("idle `holon tick AGENT` vs `import click`", samples, 1.5)
        small, big = init_home(None, "small"), init_home(None, "big")
        write_ledger(small.transcript, 1_000)
        write_ledger(big.transcript, 1_000 if quick else 1_000_000)
        tail = [*holon_exe(), "transcript", "--tail", "50", "--jsonl"]
        samples = pairs(lambda: cpu([*tail, "big"], env), lambda: cpu([*tail, "small"], env), n)
        ratio("`transcript --tail 50` 1M vs 1k entries", samples, 2.0)
        round_overhead(tmp, small, big, n)
    for name in SUBBENCHMARKS + unlisted():
        sub(name, quick)
    return 0


def unlisted() -> tuple[str, ...]:
    """bench_*.py files SUBBENCHMARKS does not name yet: run last, never skipped."""
    here = Path(__file__).resolve().parent
    return tuple(p.name for p in sorted(here.glob("bench_*.py")) if p.name not in SUBBENCHMARKS)


def sub(name: str, quick: bool) -> None:
    """Run one benchmark file with a TMPDIR of its own; report and remove what it left there."""
    path = Path(__file__).resolve().parent / name
    if not path.exists():
        print(f"\n== {name}: missing, skipped", flush=True)
        return
    print(f"\n== {name}", flush=True)
    with scratch(f"holon-bench-{path.stem}-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp))
        subprocess.run([sys.executable, str(path), *(["--quick"] if quick else [])], env=env)
        left = left_in(tmp)
        if left:
            print(f"   ({name} left {len(left)} temporary files behind, removed: {left[:3]})")


def round_overhead(tmp: Path, small, big, n: int) -> None:
    """In-process: one scripted provider round per turn, on a 1k vs a 1M transcript, in
    alternation; and the runtime overhead per provider round (target < 10 ms): half the per-pair
    difference between a turn of 3 rounds (the extra rounds call TaskList) and one of 1."""
    one, many = scripts(tmp, n)
    samples = pairs(lambda: turn(big, one), lambda: turn(small, one), n)
    ratio("per-turn overhead 1M vs 1k transcript", samples, 1.2)
    samples = pairs(lambda: turn(small, many), lambda: turn(small, one), n)
    absolute(
        "runtime overhead per provider round (bench_rounds.py)",
        [(x - y) / 2 * 1000 for x, y in samples],
        10.0,
    )


def scripts(tmp: Path, n: int) -> tuple[str, str]:
    """The models of round_overhead, enough for n pairs per agent: a turn of one round (`ok`),
    and one of 3 rounds (two TaskList calls, then `ok`)."""
    script = tmp / "script.jsonl"
    script.write_text('{"text": "ok"}\n' * (8 * n + 8))
    call = {"name": "TaskList", "arguments": {}}
    three = tmp / "three.jsonl"
    with open(three, "w") as fh:
        for i in range(2 * n + 2):
            for r in range(2):
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}{r}"}]}))
                fh.write("\n")
            fh.write(json.dumps({"text": "ok"}) + "\n")
    return f"scripted/{script}", f"scripted/{three}"


def turn(home, model: str, clock=time.perf_counter) -> float:
    """Seconds (by `clock`) of one tick that takes an operator prompt through a turn."""
    from holon.agent.admission import admit
    from holon.runtime.tick import tick

    admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": "q"})
    t0 = clock()
    tick(home, model=model)
    return clock() - t0


if __name__ == "__main__":
    raise SystemExit(main())

"""A year in fast-forward: 1,000 turns, each running a command that prints 20 KB, against the
scripted provider with a 64k-token window.

Reports, against turn 100 of the same run: per-turn runtime overhead at turn 1,000 (tick wall
time, median of 20 turns; target <= 1.2x) and the size of the request sent (the assembled
prompt's estimated tokens; target <= 1.2x), plus the largest request against the budget and the
context build time (informational: the events count whole milliseconds).
Run: PYTHONPATH=. python benchmarks/bench_context.py [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

WINDOW = 64_000
CMD = "printf '%*s' 20000 '' | tr ' ' x; echo"


def main() -> int:
    quick = "--quick" in sys.argv
    turns = 300 if quick else 1000
    early, late = (100, turns)
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-context-"))
    os.environ.update(HOLON_HOME=str(tmp / "home"), HOLON_CONTEXT_WINDOW=str(WINDOW))
    try:
        from holon.agent.admission import admit
        from holon.home.init import init_home
        from holon.runtime.tick import tick
        from holon.store import jsonl

        home = init_home(None, "bench")
        script = tmp / "script.jsonl"
        call = {"name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
        with open(script, "w") as fh:
            for i in range(turns):
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}"}]}) + "\n")
                fh.write(json.dumps({"text": f"Turn {i} done."}) + "\n")
        wall: list[float] = []
        t_start = time.perf_counter()
        for i in range(turns):
            admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": f"step {i}"})
            t0 = time.perf_counter()
            tick(home, model=f"scripted/{script}")
            wall.append(time.perf_counter() - t0)
        total = time.perf_counter() - t_start
        built = [e["data"] for e in jsonl.read(home.events) if e["kind"] == "turn_context_built"]
        per_turn = [built[i : i + 2] for i in range(0, len(built), 2)]
        size = [max(r["estimated_tokens"] for r in t) for t in per_turn]
        build = [sum(r["context_build_ms"] for r in t) for t in per_turn]
        budget = max(r["prompt_budget"] for r in built)

        def window_of(values: list[float], at: int) -> float:
            return statistics.median(values[max(0, at - 20) : at])

        rows = [
            (
                "tick wall time per turn",
                window_of(wall, late) * 1000,
                window_of(wall, early) * 1000,
            ),
            ("request size (est. tokens)", window_of(size, late), window_of(size, early)),
        ]
        print(
            f"{turns} turns in {total:.1f} s; largest request {max(size)} tokens of a "
            f"{budget}-token budget ({'ok' if max(size) <= budget else 'OVER BUDGET'})"
        )
        for name, late_v, early_v in rows:
            ratio = late_v / early_v if early_v else float("inf")
            verdict = "ok" if ratio <= 1.2 else "OVER TARGET"
            print(
                f"{name:<32} turn {late}: {late_v:9.1f}  turn {early}: {early_v:9.1f}  "
                f"ratio {ratio:5.2f}x  (target <= 1.2x: {verdict})",
                flush=True,
            )
        # whole milliseconds in the events: a ratio of single digits is noise, so no target
        print(
            f"{'context build per turn (ms)':<32} turn {late}: {window_of(build, late):9.1f}  "
            f"turn {early}: {window_of(build, early):9.1f}  (informational)"
        )
        episodes = sum(1 for _ in jsonl.read(home.context_episodes))
        print(
            f"episodes written: {episodes}; transcript {home.transcript.stat().st_size >> 20} MiB"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

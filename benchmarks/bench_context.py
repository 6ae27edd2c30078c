"""A year in fast-forward: 1,000 turns, each running a command that prints 20 KB, against the
scripted provider with a 64k-token window.

Reports, against turn 100 of the same run: the size of the request sent (the assembled prompt's
estimated tokens, median of 20 turns; target <= 1.2x), the largest request against the budget,
and, measured interleaved, the per-turn runtime overhead (tick wall time) and the context build
time per turn (targets <= 1.2x): the home as it was at turn 100 and the home at turn 1,000 each
run one more turn, alternately and each first every other pair, and each figure is the median
of the per-pair ratios (min and max shown), so that load on the machine hits both sides alike.
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
EARLY = 100


def write_script(path: Path, turns: int, tag: str = "c") -> None:
    """`turns` scripted turns: one ExecCommand round that prints 20 KB, then a short reply."""
    call = {"name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
    with open(path, "w") as fh:
        for i in range(turns):
            fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"{tag}{i}"}]}) + "\n")
            fh.write(json.dumps({"text": f"Turn {i} done."}) + "\n")


def turn(root: Path, agent_id: str, text: str, model: str) -> float:
    """Run one turn of the agent of home `root`; its wall time."""
    from holon.agent.admission import admit
    from holon.home import registry
    from holon.runtime.tick import tick

    os.environ["HOLON_HOME"] = str(root)
    home = registry.resolve(agent_id)
    admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": text})
    t0 = time.perf_counter()
    tick(home, model=model)
    return time.perf_counter() - t0


def build_seconds(root: Path, agent_id: str) -> float:
    """The context build time of the agent's last turn (all its rounds), from its events."""
    from holon.home import registry
    from holon.store import jsonl

    os.environ["HOLON_HOME"] = str(root)
    events = jsonl.tail(registry.resolve(agent_id).events, 64)
    built = [e["data"] for e in events if e["kind"] == "turn_context_built"]
    last = built[-1]["turn_id"]
    return sum(b["context_build_us"] for b in built if b["turn_id"] == last) / 1e6


def interleaved(early: Path, late: Path, agent_id: str, reps: int, tmp: Path) -> dict[str, list]:
    """The early and the late home run one turn each, alternately, each going first every other
    pair (after one turn each to warm up): per pair, the tick wall time and the context build
    time (all rounds) of each, in ms."""
    script = tmp / "measure.jsonl"
    write_script(script, reps + 2, tag="m")
    model = f"scripted/{script}"
    pairs: dict[str, list] = {"wall": [], "build": []}
    for i in range(reps + 1):
        seen = {}
        for root in (early, late) if i % 2 == 0 else (late, early):
            wall = turn(root, agent_id, f"measure {i}", model)
            seen[root] = (wall * 1000, build_seconds(root, agent_id) * 1000)
        if i:
            pairs["wall"].append((seen[early][0], seen[late][0]))
            pairs["build"].append((seen[early][1], seen[late][1]))
    return pairs


def print_pairs(name: str, pairs: list[tuple[float, float]], turns: int) -> None:
    """A figure measured interleaved: both medians, the median of the per-pair ratios, min, max."""
    ratios = [b / a for a, b in pairs]
    ratio = statistics.median(ratios)
    early_v = statistics.median(a for a, _ in pairs)
    late_v = statistics.median(b for _, b in pairs)
    print(
        f"{name:<32} turn {turns}: {late_v:9.1f}  turn {EARLY}: {early_v:9.1f}  "
        f"ratio {ratio:5.2f}x  {verdict(ratio)}\n{'':<32} (median of {len(pairs)} interleaved "
        f"pairs; min {min(ratios):.2f}, max {max(ratios):.2f})",
        flush=True,
    )


def verdict(ratio: float, target: float = 1.2) -> str:
    return f"(target <= {target}x: {'ok' if ratio <= target else 'OVER TARGET'})"


def main() -> int:
    quick = "--quick" in sys.argv
    turns = 300 if quick else 1000
    reps = 11 if quick else 31
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-context-"))
    root = tmp / "home"
    os.environ.update(HOLON_HOME=str(root), HOLON_CONTEXT_WINDOW=str(WINDOW))
    try:
        from holon.home.init import init_home
        from holon.store import jsonl

        home = init_home(None, "bench")
        script = tmp / "script.jsonl"
        write_script(script, turns)
        t_start = time.perf_counter()
        for i in range(turns):
            turn(root, "bench", f"step {i}", f"scripted/{script}")
            if i + 1 == EARLY:
                shutil.copytree(root, tmp / "early", symlinks=True)
        total = time.perf_counter() - t_start
        built = [e["data"] for e in jsonl.read(home.events) if e["kind"] == "turn_context_built"]
        per_turn = [built[i : i + 2] for i in range(0, len(built), 2)]
        size = [max(r["estimated_tokens"] for r in t) for t in per_turn]
        budget = max(r["prompt_budget"] for r in built)

        def window_of(values: list[float], at: int) -> float:
            return statistics.median(values[max(0, at - 20) : at])

        print(
            f"{turns} turns in {total:.1f} s; largest request {max(size)} tokens of a "
            f"{budget}-token budget ({'ok' if max(size) <= budget else 'OVER BUDGET'})"
        )
        late_v, early_v = window_of(size, turns), window_of(size, EARLY)
        print(
            f"{'request size (est. tokens)':<32} turn {turns}: {late_v:9.1f}  turn {EARLY}: "
            f"{early_v:9.1f}  ratio {late_v / early_v:5.2f}x  {verdict(late_v / early_v)}",
            flush=True,
        )
        episodes = sum(1 for _ in jsonl.read(home.context_episodes))
        pairs = interleaved(tmp / "early", root, "bench", reps, tmp)
        print_pairs("tick wall time per turn (ms)", pairs["wall"], turns)
        print_pairs("context build per turn (ms)", pairs["build"], turns)
        print(
            f"episodes written: {episodes}; transcript {home.transcript.stat().st_size >> 20} MiB"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

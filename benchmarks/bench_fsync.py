"""fsyncs per scripted turn: a one-round turn, and what each extra tool call adds.

Counts (not times) os.fsync calls made in this process while `holon.runtime.tick.tick` runs one
turn, on a warm agent (its second turn): a one-round turn, and turns of two rounds whose first
calls TaskList 1, 2 and 5 times. Targets (issue 38): at most half of the 19 fsyncs a one-round
turn made before group commit (holon.store.groupcommit), at most 1 fsync per extra tool call.

Run: PYTHONPATH=. python benchmarks/bench_fsync.py [--quick] [--by-file]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

BEFORE_ONE_ROUND = 19  # measured on main before group commit (2 per extra call, 5 per round)
PER_CALL_TARGET = 1.0
CALLS = (1, 2, 5)


@contextmanager
def counting() -> Iterator[Counter]:
    """os.fsync calls made inside the block, by the file (or directory) synced."""
    seen: Counter = Counter()
    real = os.fsync

    def fsync(fd: int) -> None:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = "?"
        seen[target] += 1
        real(fd)

    os.fsync = fsync  # type: ignore[assignment]
    try:
        yield seen
    finally:
        os.fsync = real  # type: ignore[assignment]


def turn_fsyncs(tmp: Path, calls: int) -> Counter:
    """fsyncs of an agent's second turn: `calls` TaskList calls in its first round (none: one
    round)."""
    from holon.agent.admission import admit, text_body
    from holon.home.init import init_home
    from holon.runtime.tick import tick

    home = init_home(None, f"fs{calls}")
    script = tmp / f"fs{calls}.jsonl"
    with open(script, "w") as fh:
        for turn in range(2):
            if calls:
                batch = [
                    {"name": "TaskList", "arguments": {}, "id": f"c{turn}_{k}"}
                    for k in range(calls)
                ]
                fh.write(json.dumps({"text": "", "tool_calls": batch}) + "\n")
            fh.write(json.dumps({"text": f"done {turn}"}) + "\n")
    admit(home, "cli_prompt", "operator_prompt", text_body("warm up"))
    tick(home, model=f"scripted/{script}")  # the first turn imports the runtime
    admit(home, "cli_prompt", "operator_prompt", text_body("counted"))
    with counting() as seen:
        tick(home, model=f"scripted/{script}")
    return Counter({k.replace(str(tmp), ""): v for k, v in seen.items()})


def main() -> int:
    by_file = "--by-file" in sys.argv
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-fsync-"))
    os.environ.update(HOLON_HOME=str(tmp / "home"))
    os.environ.pop("HOLON_MODEL", None)
    try:
        figures = {calls: turn_fsyncs(tmp, calls) for calls in (0, *CALLS)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    one = sum(figures[0].values())
    verdict = "ok" if one <= BEFORE_ONE_ROUND / 2 else "OVER TARGET"
    print(
        f"{'fsyncs per one-round turn':<40} {one:5d}  (before group commit {BEFORE_ONE_ROUND}; "
        f"target <= {BEFORE_ONE_ROUND / 2:g}: {verdict})"
    )
    totals = {calls: sum(seen.values()) for calls, seen in figures.items()}
    per_call = (totals[CALLS[-1]] - totals[CALLS[0]]) / (CALLS[-1] - CALLS[0])
    verdict = "ok" if per_call <= PER_CALL_TARGET else "OVER TARGET"
    print(
        f"{'fsyncs per extra tool call':<40} {per_call:5.1f}  (before 2; "
        f"target <= {PER_CALL_TARGET:g}: {verdict})"
    )
    print(f"{'fsyncs per turn with 1/2/5 calls':<40} " + "/".join(str(totals[c]) for c in CALLS))
    if by_file:
        for calls, seen in figures.items():
            print(f"  {calls} call(s):")
            for path, n in sorted(seen.items()):
                print(f"    {n:3d} {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Ledger bytes per turn: a turn whose command prints 20 KB against a short turn (scripted
provider), with the tool output stored once (holon.store.storedonce).

Run: PYTHONPATH=. python benchmarks/bench_retention.py [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

OUT = 20_000
CMD = f"printf '%*s' {OUT} '' | tr ' ' x; echo"


def main() -> int:
    turns = 5 if "--quick" in sys.argv else 20
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-retention-"))
    os.environ["HOLON_HOME"] = str(tmp / "home")
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
                fh.write(json.dumps({"text": f"short turn {i}."}) + "\n")
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}"}]}) + "\n")
                fh.write(json.dumps({"text": f"Turn {i} done."}) + "\n")
        ledgers = [home.transcript, home.events, home.messages, home.briefs, home.context_episodes]

        def size() -> int:
            return sum(jsonl.end_offset(p) for p in ledgers)

        short, big = [], []
        for i in range(turns):
            for kind in (short, big):
                admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": f"s{i}"})
                before = size()
                tick(home, model=f"scripted/{script}")
                kind.append(size() - before)
        s, b = statistics.median(short), statistics.median(big)
        print(f"{'ledger bytes per short turn':<44} {s:9.0f} B")
        print(
            f"{'ledger bytes per turn with 20 KB output':<44} {b:9.0f} B  ratio {b / s:5.2f}x "
            f"the short turn; {(b - s) / OUT:4.2f} x the output (1.00 = stored once)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

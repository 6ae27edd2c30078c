"""benchmarks/bench_ab.py: a figure is this checkout against REV, the median of the per-pair
ratios this/REV, and "no worse" only up to 1.05."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("bench_ab", REPO / "benchmarks" / "bench_ab.py")
bench_ab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_ab)


def run(costs: dict[str, list[float]], capsys) -> str:
    bench_ab.compare("x", len(costs["this"]) - 1, lambda side: costs[side].pop(0))
    return capsys.readouterr().out


def test_this_side_is_the_numerator_and_105_is_still_no_worse(capsys):
    out = run({"this": [1.0, 1.05, 2.1, 1.05], "rev": [1.0, 1.0, 2.0, 1.0]}, capsys)
    assert "1.05x" in out and out.rstrip().endswith("no worse")
    assert out.split()[1:3] == ["1000.0", "1050.0"]  # REV's median first, then this one's


def test_a_median_ratio_over_105_is_worse(capsys):
    out = run({"this": [1.0, 1.06, 1.0, 1.2], "rev": [1.0, 1.0, 1.0, 1.0]}, capsys)
    assert out.rstrip().endswith("WORSE")

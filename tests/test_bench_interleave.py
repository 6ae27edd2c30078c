"""benchmarks/interleave.py: pairs alternate A and B, a figure is the median of per-pair ratios
with its spread, target and verdict, and the scratch directory goes however the run ends."""

from __future__ import annotations

import importlib.util
import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("interleave", REPO / "benchmarks" / "interleave.py")
interleave = importlib.util.module_from_spec(spec)
spec.loader.exec_module(interleave)


def test_pairs_alternate_which_runs_first_after_a_warm_up():
    calls: list[str] = []
    a = lambda: calls.append("a") or 2.0  # noqa: E731
    b = lambda: calls.append("b") or 1.0  # noqa: E731
    assert interleave.pairs(a, b, 4) == [(2.0, 1.0)] * 4
    assert "".join(calls) == "ab" + "ab" + "ba" + "ab" + "ba"


def test_a_figure_is_the_median_of_per_pair_ratios_with_its_spread(capsys):
    samples = [(3.0, 1.0), (1.0, 1.0), (2.0, 1.0), (8.0, 2.0), (30.0, 10.0)]
    assert interleave.ratio("x", samples, 2.5) == 3.0
    out = capsys.readouterr().out
    assert "3.00x [1.00-4.00]" in out and "target <= 2.5x" in out and out.rstrip().endswith("OVER")
    assert interleave.difference("d", [(0.003, 0.001), (0.002, 0.001)], 5.0) == pytest.approx(1.5)
    assert capsys.readouterr().out.rstrip().endswith("ok")


def test_the_scratch_directory_goes_on_sigterm():
    with pytest.raises(SystemExit), interleave.scratch("holon-test-") as where:
        (where / "f").write_text("x")
        os.kill(os.getpid(), signal.SIGTERM)
    assert not where.exists()
    assert signal.getsignal(signal.SIGTERM) is not interleave._exit

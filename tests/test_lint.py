"""`make lint` in the test suite: ruff finds nothing and the code is formatted (100 columns)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["holon", "tests", "benchmarks"]


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_is_clean(args):
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *args, *SOURCES], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]

"""The light paths stay light: no pexpect (or provider SDK) for --help, tool list,
or an idle tick."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT, init_agent

PROBE = (
    "import sys, runpy; sys.argv = ['holon'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('holon', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "bad = [m for m in ('pexpect', 'openai', 'anthropic') if m in sys.modules]\n"
    "sys.stderr.write('IMPORTED:' + ','.join(bad))\n"
)


@pytest.mark.parametrize("args", [["--help"], ["tool", "list"], ["tick", "a"]])
def test_no_heavy_imports(args):
    init_agent()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env
    )
    assert "IMPORTED:" in proc.stderr and proc.stderr.rsplit("IMPORTED:", 1)[1] == ""

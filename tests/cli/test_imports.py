"""The light paths stay light: no pexpect (or provider SDK) for --help, tool list,
or an idle tick, and no pydantic for --help or an idle tick; a tick that runs a turn does load
pydantic (which shows the probe sees what a command imports)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT, holon, init_agent, write_script

WATCHED = ("pexpect", "openai", "anthropic", "pydantic")
PROBE = (
    "import sys, runpy; sys.argv = ['holon'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('holon', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    f"seen = [m for m in {WATCHED!r} if m in sys.modules]\n"
    "sys.stderr.write('IMPORTED:' + ','.join(seen))\n"
)


def _run(*args: str) -> tuple[set[str], str]:
    """Which of WATCHED `holon *args` imported, and its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env
    )
    assert "IMPORTED:" in proc.stderr, proc.stderr
    return set(filter(None, proc.stderr.rsplit("IMPORTED:", 1)[1].split(","))), proc.stdout


@pytest.mark.parametrize(
    ("args", "forbidden"),
    [
        (["--help"], WATCHED),
        (["tool", "list"], ("pexpect", "openai", "anthropic")),
        (["tick", "a"], WATCHED),
    ],
    ids=["help", "tool-list", "idle-tick"],
)
def test_no_heavy_imports(args, forbidden):
    init_agent()
    imported, _ = _run(*args)
    assert imported & set(forbidden) == set()


def test_a_tick_that_runs_a_turn_loads_pydantic(tmp_path):
    init_agent()
    model = write_script(tmp_path / "script.jsonl", [{"text": "done"}])
    holon("enqueue", "a", "--kind", "system_tick", "--text", "hello")
    imported, out = _run("tick", "a", "--model", model)
    assert out.startswith("a: ran") and "pydantic" in imported

"""Examples run: the quickstart and interactive scripts end to end with the real CLI."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO, subprocess_env


def run_example(name: str, **env: str) -> subprocess.CompletedProcess:
    """`examples/NAME/run.sh` with this checkout's holon; it must succeed."""
    proc = subprocess.run(
        ["sh", str(REPO / "examples" / name / "run.sh")],
        env=subprocess_env(HOLON=f"{sys.executable} -m holon", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_quickstart_script_runs(tmp_path):
    proc = run_example("quickstart", HOLON_HOME=str(tmp_path / "qs-home"))
    assert "created agent demo" in proc.stdout
    assert "Hello! I am your new holon agent." in proc.stdout
    assert (
        "tool result ExecCommand (success)" in proc.stdout
    )  # the transcript shows the real command
    assert "closure completed" in proc.stdout


def test_interactive_example_drives_a_repl(tmp_path):
    proc = run_example("interactive", PYTHON=sys.executable, HOLON_HOME=str(tmp_path / "h"))
    assert "print(x)\n42\n>>> " in proc.stdout
    assert ": completed (exit 0)" in proc.stdout
    assert proc.stderr.count("the pattern matched") == 2

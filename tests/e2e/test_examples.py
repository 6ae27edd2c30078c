"""Examples run: the quickstart script end to end with the real CLI."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO, subprocess_env


def test_quickstart_script_runs(tmp_path):
    env = subprocess_env(HOLON=f"{sys.executable} -m holon", HOLON_HOME=str(tmp_path / "qs-home"))
    proc = subprocess.run(
        ["sh", str(REPO / "examples/quickstart/run.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "created agent demo" in proc.stdout
    assert "Hello! I am your new holon agent." in proc.stdout
    assert (
        "tool result ExecCommand (success)" in proc.stdout
    )  # the transcript shows the real command
    assert "closure completed" in proc.stdout


def test_interactive_example_drives_a_repl(tmp_path):
    env = subprocess_env(
        HOLON=f"{sys.executable} -m holon", PYTHON=sys.executable, HOLON_HOME=str(tmp_path / "h")
    )
    proc = subprocess.run(
        ["sh", str(REPO / "examples/interactive/run.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "print(x)\n42\n>>> " in proc.stdout
    assert ": completed (exit 0)" in proc.stdout
    assert proc.stderr.count("the pattern matched") == 2

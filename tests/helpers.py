"""Helpers for tests: run the real `holon` entry point in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def holon_cmd() -> list[str]:
    return [sys.executable, "-m", "holon"]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None,
        timeout: float = 60, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run the real `holon` entry point in a subprocess."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    proc = subprocess.run([*holon_cmd(), *args], input=data, capture_output=True, timeout=timeout,
                          env=env or subprocess_env(), cwd=cwd)
    proc.stdout = proc.stdout.decode("utf-8", "replace")  # type: ignore[assignment]
    proc.stderr = proc.stderr.decode("utf-8", "replace")  # type: ignore[assignment]
    return proc

"""Agent homes for sandbox tests, and how to run a command the way the agent does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, holon):
    """A fresh agent home under the temporary directory (itself writable in workspace-write, so
    the read-only `.holon/` inside it is the hard case)."""
    path = tmp_path / "agent"
    proc = holon("init", str(path))
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture
def call(holon):
    """`holon tool call HOME NAME --input ARGS`: (exit code, envelope)."""

    def run(home: Path, name: str, args: dict, **kw) -> tuple[int, dict]:
        proc = holon("tool", "call", str(home), name, "--input", json.dumps(args), **kw)
        assert proc.stdout, proc.stderr
        return proc.returncode, json.loads(proc.stdout)

    return run


@pytest.fixture
def sh(call):
    """Run a shell command as the agent's ExecCommand does: (exit status, stdout, stderr)."""

    def run(home: Path, cmd: str, **args) -> tuple[int | None, str, str]:
        code, env = call(home, "ExecCommand", {"cmd": cmd, "login": False, **args})
        assert code == 0 and env["status"] == "success", env
        r = env["result"]
        return r["exit_status"], r["stdout_preview"], r["stderr_preview"]

    return run

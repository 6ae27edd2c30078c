"""Shared test helpers: run the real CLI in a subprocess, normalise receipts,
compare golden files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def holon_cmd() -> list[str]:
    return [sys.executable, "-m", "holon"]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def run(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    cwd: str | None = None,
) -> subprocess.CompletedProcess:
    """Run the real `holon` entry point in a subprocess."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    proc = subprocess.run(
        [*holon_cmd(), *args],
        input=data,
        capture_output=True,
        timeout=timeout,
        env=env or subprocess_env(),
        cwd=cwd,
    )
    proc.stdout = proc.stdout.decode("utf-8", "replace")  # type: ignore[assignment]
    proc.stderr = proc.stderr.decode("utf-8", "replace")  # type: ignore[assignment]
    return proc


ROOT = REPO


def holon(*args: str, check: bool = True, input: str | None = None, timeout: float = 60):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "holon", *args],
        capture_output=True,
        text=True,
        env=env,
        input=input,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"holon {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def init_agent(agent: str = "a") -> Path:
    holon("init", "--agent-id", agent)
    return Path(os.environ["HOLON_HOME"]) / "agents" / agent


def write_script(path: Path, rounds: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    return f"scripted/{path}"


def transcript(home: Path) -> list[dict]:
    p = home / ".holon" / "ledger" / "transcript.jsonl"
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def wait_for(pred, timeout: float = 10.0, step: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def normalize(text: str) -> str:
    text = re.sub(r"/tmp/pytest-of-[^/]+/pytest-\d+/[^/\s\"]+", "<TMP>", text)
    text = text.replace("<TMP>/holon-home/agents/a", "<HOME>")
    text = re.sub(r"/\S*?/(artifacts|tasks)/", r"<HOME>/.holon/\1/", text)
    text = re.sub(r"\btask_0[0-9a-z]{12,}", "<TASK_ID>", text)
    text = re.sub(r"-[0-9a-f]{8}\.log", "-<RAND>.log", text)
    text = re.sub(r"\d+ ms\b", "<N> ms", text)
    text = re.sub(r'"duration_ms": \d+', '"duration_ms": <N>', text)
    text = re.sub(r"sha256:[0-9a-f]{64}", "sha256:<DIGEST>", text)
    text = re.sub(r"/tmp/\S+?/holon-home/agents/a", "<HOME>", text)
    return text


def check_golden(name: str, actual: str) -> None:
    from golden_check import check_golden as check

    check(name, actual)

"""Golden files for long-lived context through the real `holon` entry point: `holon debug prompt`
(human and JSON) of a scripted agent whose window has rolled past its first turns, and the episode
record those turns were folded into.

Token estimates depend on path lengths, so the whole scenario lives under one directory whose
path always has the same length; the clock is pinned with HOLON_NOW.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from golden_check import check, normalize
from helpers import run
from scenario_helpers import subprocess_env

TURNS = 5
CMD = "printf '%*s' 3000 '' | tr ' ' y; echo"
# hashes cover paths; token counts and byte offsets move with the digits of a command's duration
VOLATILE = [
    (re.compile(r"holon-a-[0-9a-f]{16}"), "holon-a-<hash>"),
    (re.compile(r'("context_fingerprint": "|fingerprint )[0-9a-f]{16}'), r"\1<hash>"),
    (re.compile(r"\b\d+ tokens\b"), "<n> tokens"),
    (re.compile(r"(estimate: +|transcript offset )\d+"), r"\1<n>"),
    (
        re.compile(r'"(tokens|estimated_tokens|window_start|start_offset|end_offset)": \d+'),
        r'"\1": <n>',
    ),
]


@pytest.fixture
def scene():
    root = Path(tempfile.mkdtemp(prefix="holon-golden-", dir="/tmp"))  # fixed-length path
    try:
        script = root / "script.jsonl"
        rounds = []
        for i in range(TURNS):
            call = {"name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
            rounds.append({"text": "", "tool_calls": [{**call, "id": f"call_{i}"}]})
            rounds.append({"text": f"Turn {i + 1} done; printed 3000 characters."})
        script.write_text("".join(json.dumps(r) + "\n" for r in rounds))
        env = subprocess_env(
            HOLON_HOME=str(root / "home"),
            HOLON_NOW="2027-03-01T09:00:00Z",
            HOLON_CONTEXT_WINDOW="13500",
            HOLON_MODEL=f"scripted/{script}",
        )
        assert run("init", "--agent-id", "a", env=env).returncode == 0
        for i in range(TURNS):
            text = f"Step {i + 1}: print the report."
            if i == 0:
                text += " Remember the code word OSPREY-9 for later."
            r = run("prompt", "a", text, env=env)
            assert r.returncode == 0, r.stderr
        yield root, env
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _norm(text: str, root: Path) -> str:
    text = normalize(text, root)
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def test_debug_prompt_is_golden(scene):
    root, env = scene
    human = run("debug", "prompt", "a", env=env)
    assert human.returncode == 0, human.stderr
    check("context/debug_prompt.txt", _norm(human.stdout, root))
    doc = run("debug", "prompt", "a", "--json", env=env)
    assert doc.returncode == 0, doc.stderr
    check("context/debug_prompt.json", _norm(doc.stdout, root))
    manifest = json.loads(doc.stdout)["manifest"]
    assert manifest["estimated_tokens"] <= manifest["prompt_budget"]
    assert manifest["episodes"] and manifest["compression_epoch"] >= 1
    assert "OSPREY-9" in human.stdout  # the first turn survives in an episode summary


def test_episode_record_is_golden(scene):
    root, _ = scene
    ledger = root / "home" / "agents" / "a" / ".holon" / "ledger" / "context_episodes.jsonl"
    first = json.loads(ledger.read_text().splitlines()[0])
    assert "OSPREY-9" in first["summary"]
    check("context/episode.json", _norm(json.dumps(first, indent=1, ensure_ascii=False), root))

"""Golden files: the normalised quickstart transcript and `holon status --json`."""

from __future__ import annotations

import json
from pathlib import Path

from golden_check import check, normalize
from helpers import REPO, run, subprocess_env


def _quickstart(holon_env: Path) -> dict[str, str]:
    env = subprocess_env(HOLON_MODEL=f"scripted/{REPO / 'examples/quickstart/script.jsonl'}")
    assert run("init", "--agent-id", "demo", env=env).returncode == 0
    r = run("prompt", "demo", "Introduce yourself.", env=env)
    assert r.returncode == 0, r.stderr
    return env


def test_quickstart_transcript_is_golden(holon_env):
    env = _quickstart(holon_env)
    records = [
        json.loads(x) for x in run("transcript", "demo", "--jsonl", env=env).stdout.splitlines()
    ]
    text = (
        "\n".join(json.dumps(r, indent=1, sort_keys=True, ensure_ascii=False) for r in records)
        + "\n"
    )
    check("quickstart/transcript.jsonl.txt", normalize(text, holon_env, REPO))


def test_status_json_is_golden(holon_env):
    env = _quickstart(holon_env)
    doc = run("status", "demo", "--json", env=env).stdout
    check("quickstart/status.json", normalize(doc, holon_env, REPO))

"""The admission path stays light: `holon enqueue` and `holon prompt --no-wait` admit a message
(seal, queue file, messages ledger line, event) without importing pydantic or the runtime; the
provider preflight of `prompt` (a prompt its turn would surely fail on is refused) reads the
provider settings without importing a transport or the conversation types."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import ROOT, holon, init_agent, write_script

from holon.home.layout import Home
from holon.store import jsonl

RUNTIME = ("holon.runtime", "holon.model.records", "holon.model.messages", "holon.home.runstate")
SDKS = ("openai", "anthropic", "httpx", "httpx2", "pexpect", "croniter", "watchfiles")
PROBE = (
    "import sys, runpy; sys.argv = ['holon'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('holon', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "sys.stderr.write('IMPORTED:' + ','.join(sorted(sys.modules)))\n"
)


def _imported(*args: str) -> tuple[set[str], subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env
    )
    assert "IMPORTED:" in proc.stderr, proc.stderr
    return set(proc.stderr.rsplit("IMPORTED:", 1)[1].split(",")), proc


def _under(modules: set[str], roots: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == r or m.startswith(r + ".") for r in roots)}


def test_admission_imports_no_pydantic_and_no_runtime(tmp_path):
    home = Home(init_agent())
    holon("model", "set", "a", write_script(tmp_path / "s.jsonl", [{"text": "done"}] * 2))
    enqueued, proc = _imported("enqueue", "a", "--kind", "channel_event", "--text", "hi")
    assert proc.returncode == 0, proc.stderr
    light = ("pydantic", "holon.model", "holon.providers", *RUNTIME, *SDKS)
    assert _under(enqueued, light) == set()
    prompted, proc = _imported("prompt", "a", "hello", "--no-wait")
    assert proc.returncode == 0 and proc.stdout.startswith("queued "), proc.stderr
    heavy = (
        "pydantic",
        "holon.model",
        *RUNTIME,
        *SDKS,
        "holon.ops.status",
        "holon.tasks.command.spawn",
    )
    assert _under(prompted, heavy) == set()
    transports = ("holon.providers.scripted", "holon.providers.openai_responses")
    assert _under(prompted, transports) == set()
    # what was admitted is what the runtime reads: both messages run and are briefed
    assert holon("tick", "a", "--until-idle").returncode == 0
    briefed = {b["related_message_id"] for b in jsonl.read(home.briefs) if b["kind"] == "result"}
    assert briefed == {m["id"] for m in jsonl.read(home.messages)} and len(briefed) == 2


def test_a_real_providers_preflight_imports_no_transport(monkeypatch):
    """The checks a prompt for openai/* or openai-codex/* passes (a key, a sign-in) are read from
    settings: no transport module, no SDK, no pydantic."""
    init_agent()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("OPENAI_CODEX_ACCESS_TOKEN", "tok-test-not-real")
    heavy = ("pydantic", "holon.model", *RUNTIME, *SDKS, "holon.providers.openai_responses")
    for ref in ("openai/gpt-5", "openai-codex/gpt-5", "ollama/llama3"):
        prompted, proc = _imported("prompt", "a", "hi", "--no-wait", "--model", ref)
        assert proc.returncode == 0 and proc.stdout.startswith("queued "), proc.stderr
        transports = ("holon.providers.codex_stream", "holon.providers.chat_completions")
        assert _under(prompted, (*heavy, *transports)) == set(), ref
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    missing, proc = _imported("prompt", "a", "hi", "--no-wait", "--model", "anthropic/claude")
    assert "ANTHROPIC_API_KEY" in proc.stderr and not proc.stdout  # still refused, as light
    assert _under(missing, heavy) == set()

"""A fact from turn 1 recalled 300 turns later, through the real `holon` entry point and the
scripted provider: MemorySearch finds it (in the brief, the memory file, the message, the command
and the episode turn 1 was folded into) long after the conversation window has rolled past it,
and MemoryGet returns its exact text. `holon memory search|get` see the same."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run, subprocess_env

from holon.agent.admission import admit
from holon.agent.handle import Agent
from holon.home.init import init_home
from holon.memory.sources import source_ref
from holon.store import jsonl

TURNS = 300
FACT = "vault path secret/backups/KESTREL-77"
SECTION = f"## Backups\n{FACT}\n"
REMEMBER = f"printf '{SECTION.replace(chr(10), chr(92) + 'n')}' >> memory/self.md"


def _rounds(ref: str) -> list[dict]:
    call = {"name": "ExecCommand", "arguments": {"cmd": REMEMBER, "login": False}, "id": "c0"}
    rounds: list[dict] = [
        {"text": "", "tool_calls": [call]},
        {"text": f"Noted the backup location: {FACT}."},
    ]
    rounds += [{"text": f"Step {i} done; nothing else to report."} for i in range(2, TURNS + 1)]
    search = {"name": "MemorySearch", "arguments": {"query": "KESTREL-77 backups"}, "id": "s"}
    get = {"name": "MemoryGet", "arguments": {"source_ref": ref}, "id": "g"}
    rounds += [
        {"text": "", "tool_calls": [search]},
        {"text": "", "tool_calls": [get]},
        {"text": "The backups live in the vault path I noted in turn 1."},
    ]
    return rounds


def test_a_turn_1_fact_is_recalled_300_turns_later(tmp_path: Path):
    env = subprocess_env(HOLON_CONTEXT_WINDOW="6000")
    home = init_home(None, "a")
    ref = source_ref("a", "file:memory/self.md", "memory/self.md#Backups#0")
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in _rounds(ref)))
    env["HOLON_MODEL"] = f"scripted/{script}"
    body = {"type": "text", "text": f"Remember where the backups are: {FACT}."}
    admit(home, "cli_prompt", "operator_prompt", body)
    for i in range(2, TURNS + 1):
        admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": f"Step {i}."})
    ticked = run("tick", "a", "--until-idle", env=env, timeout=600)
    assert ticked.returncode == 0, ticked.stderr

    entries = list(jsonl.read(home.transcript))
    turn1 = next(e for e in entries if e["kind"] == "message")
    state = Agent(home).state()
    assert state.context.window_start > turn1_offset(home, turn1["id"])  # turn 1 rolled out
    assert FACT in home.memory.joinpath("self.md").read_text()

    asked = run("prompt", "a", "Where are the backups?", env=env, timeout=120)
    assert asked.returncode == 0, asked.stderr
    results = {e["data"]["tool_name"]: e["data"]["envelope"] for e in _tool_results(home)}
    found = results["MemorySearch"]["result"]["results"]
    kinds = {r["kind"] for r in found if "KESTREL-77" in r["snippet"]}
    assert {"brief", "memory_file", "message", "tool_execution", "episode"} <= kinds, found
    got = results["MemoryGet"]["result"]
    assert got["content"] == SECTION and got["truncated"] is False
    assert got["source_path"] == "memory/self.md" and got["scope_kind"] == "agent"
    # the searches themselves are not tool memory
    assert not any(r["title"].startswith("Memory") for r in found)

    listed = run("memory", "search", "a", "KESTREL-77", "--json", "--limit", "20", env=env)
    assert listed.returncode == 0, listed.stderr
    noted = [
        r
        for r in json.loads(listed.stdout)["results"]
        if r["title"].startswith("result brief: Noted")
    ]
    assert len(noted) == 1, listed.stdout
    exact = run("memory", "get", "a", noted[0]["source_ref"], env=env)
    assert exact.returncode == 0, exact.stderr
    assert exact.stdout == f"Noted the backup location: {FACT}.\n"


def turn1_offset(home, entry_id: str) -> int:
    offset = 0
    with open(home.transcript, "rb") as f:
        for line in f:
            if json.loads(line)["id"] == entry_id:
                return offset
            offset += len(line)
    raise AssertionError("turn 1 is not in the transcript")


def _tool_results(home) -> list[dict]:
    return [
        e
        for e in jsonl.read(home.transcript)
        if e["kind"] == "tool_result" and e["data"]["tool_name"].startswith("Memory")
    ]

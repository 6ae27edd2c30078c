"""Twenty facts (golden/recall/facts.json) planted early in a scripted run, each as an operator's
message, a command's output, the agent's reply or a memory file, between routine turns whose
command output shares the questions' words; then asked about with paraphrased operator
questions. The agent's own MemorySearch, given the question as asked, ranks the fact in its top
five for at least 18 of 20 and never returns the question itself (the real `holon` entry point,
compactions forced by a small window)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from helpers import ROOT, run, subprocess_env

from holon.agent.admission import admit
from holon.home.init import init_home
from holon.memory import index
from holon.store import jsonl

FACTS = json.loads((ROOT / "golden" / "recall" / "facts.json").read_text())
FILLER = [
    "Please check the database connection pool settings.",
    "Run the deploy to staging again and tell me when it is done.",
    "Look at the upload handler logs for errors.",
    "Any news on the release branch?",
    "Update the dashboard colors to the new palette.",
    "Review the backup script for typos.",
    "The API docs need a cleanup.",
    "Rotate the log files on the build box.",
    "Is the CI green?",
    "Send the weekly report to the team.",
    "What is the status of the reports?",
    "Tidy the test fixtures.",
    "Bump the version in the changelog.",
    "Check the memory usage of the worker.",
    "Who reviewed the last pull request?",
    "Clean up the cache directory.",
]
# the words of the questions, and more, in the output of the commands between the facts
NOISE = (
    "database deploy staging upload release branch dashboard backup api report test memory cache"
    " version key vendor design review python invoices billing worker cron job latency timezone"
    " server bucket size host port customer contract sms requests second load image resizer leak"
    " operator english notes force push primary call project spelling rotate log build team"
    " the a of to in and is for on with we our it this that was were be by at from"
).split()
NOISE_WORDS = 250  # about 1.5 KB of output a filler turn
FILLERS_PER_FACT = 2
TOP = 5
NEEDED = 18


def _exec(cmd: str, ident: str) -> dict:
    return {"name": "ExecCommand", "arguments": {"cmd": cmd, "login": False}, "id": ident}


def _plant(i: int, fact: dict) -> tuple[str, list[dict]]:
    """(the operator's message, the model's rounds) of the turn that plants one fact."""
    text = fact["fact"]
    if fact["via"] == "message":
        return text, [{"text": "Noted."}]
    if fact["via"] == "reply":
        return "Summarise what you found.", [{"text": text}]
    if fact["via"] == "command":
        call = _exec(f"echo '{text}'", f"c{i}")
        return "Look the setting up.", [{"text": "", "tool_calls": [call]}, {"text": "Checked."}]
    call = _exec(f"printf '\\n## Note {i}\\n%s\\n' '{text}' >> memory/self.md", f"m{i}")
    return "Keep that in your memory file.", [
        {"text": "", "tool_calls": [call]},
        {"text": "Saved."},
    ]


def _filler(n: int) -> tuple[str, list[dict]]:
    """A routine turn: a command whose output shares words with the questions, and a reply."""
    rng = random.Random(n)
    noise = " ".join(rng.choice(NOISE) for _ in range(NOISE_WORDS))
    call = _exec(f"echo '{noise}'", f"f{n}")
    rounds = [{"text": "", "tool_calls": [call]}, {"text": f"Done with step {n}."}]
    return FILLER[n % len(FILLER)], rounds


def _turns() -> list[tuple[str, list[dict]]]:
    turns: list[tuple[str, list[dict]]] = []
    for i, fact in enumerate(FACTS):
        turns.append(_plant(i, fact))
        turns += [_filler(i * FILLERS_PER_FACT + j) for j in range(FILLERS_PER_FACT)]
    for i, fact in enumerate(FACTS):
        search = {"name": "MemorySearch", "arguments": {"query": fact["question"]}, "id": f"s{i}"}
        turns.append((fact["question"], [{"text": "", "tool_calls": [search]}, {"text": "OK."}]))
    return turns


def test_paraphrased_questions_find_the_planted_facts(tmp_path: Path):
    env = subprocess_env(HOLON_CONTEXT_WINDOW="6000")
    home = init_home(None, "a")
    turns = _turns()
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for _, rounds in turns for r in rounds))
    env["HOLON_MODEL"] = f"scripted/{script}"
    for text, _ in turns:
        admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": text})
    ticked = run("tick", "a", "--until-idle", env=env, timeout=600)
    assert ticked.returncode == 0, ticked.stderr

    found = [
        e["data"]["envelope"]["result"]
        for e in jsonl.read(home.transcript)
        if e["kind"] == "tool_result" and e["data"]["tool_name"] == "MemorySearch"
    ]
    assert [f["query"] for f in found] == [fact["question"] for fact in FACTS]
    missed = []
    for fact, result in zip(FACTS, found, strict=True):
        top = result["results"][:TOP]
        assert all(r["title"] != f"operator_prompt: {fact['question']}" for r in top), top
        bodies = [index.get(home, r["source_ref"])["content"] for r in top]
        if not any(fact["marker"] in body for body in bodies):
            missed.append((fact["question"], [r["title"] for r in top]))
    assert len(FACTS) - len(missed) >= NEEDED, json.dumps(missed, indent=1)

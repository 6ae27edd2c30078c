"""A turn re-reads the agent's files only when another process may have changed them."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

from holon.agent.admission import admit, text_body
from holon.runtime.tick import tick

WATCHED = ("state.json", "events.jsonl")


def _count_reads(fn) -> Counter:
    """Opens for reading of the watched files while `fn` runs (an audit hook cannot be removed, so
    it stays installed but counts only while `active`)."""
    counts: Counter = Counter()
    active = [True]

    def hook(event: str, args: tuple) -> None:
        if event != "open" or not active[0]:
            return
        path, mode, flags = str(args[0]), args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wa+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR)
        )
        name = os.path.basename(path)
        if name in WATCHED and not writing:
            counts[name] += 1

    sys.addaudithook(hook)
    try:
        fn()
    finally:
        active[0] = False
    return counts


def _two_round_turn(agent, tmp_path) -> str:
    script = tmp_path / "s.jsonl"
    rounds = [
        {
            "text": "look",
            "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": "true", "login": False}}],
        },
        {"text": "done"},
    ]
    script.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    admit(agent, "cli_prompt", "operator_prompt", text_body("hi"))
    return f"scripted/{script}"


def test_a_two_round_turn_reads_state_and_events_a_bounded_number_of_times(agent, tmp_path):
    model = _two_round_turn(agent, tmp_path)
    outcome = []
    counts = _count_reads(lambda: outcome.append(tick(agent, model=model)))
    assert outcome[0].outcome == "ran" and outcome[0].turns[0]["status"] == "completed"
    # before the Agent cached its state and the next event_seq: 20 and 9
    assert counts["state.json"] <= 3, counts
    # one for the next event_seq, one for the ledger settle (holon.agent.ledgermerge), which reads
    # only what was appended since its last check: neither grows with the agent's age
    assert counts["events.jsonl"] <= 2, counts


def test_event_seq_stays_contiguous_when_another_writer_appends(agent):
    from holon.agent.handle import Agent
    from holon.store import jsonl

    mine, other = Agent(agent), Agent(agent)
    for i in range(6):
        (mine if i % 3 else other).event("probe", i=i)
    seqs = [e["event_seq"] for e in jsonl.read(agent.events)]
    assert seqs == list(range(1, len(seqs) + 1))

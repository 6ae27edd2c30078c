"""How often a turn replaces `.holon/state.json`: once when it starts (in flight, the agent
running) and once when it settles (counters, closure, brief time, working memory, the agent idle,
last_tick_at), however many rounds it runs. Pinned, so that a new write per turn or per round is
a decision, not a drift."""

from __future__ import annotations

import json
import os
import sys

from holon.agent.admission import admit, text_body
from holon.agent.handle import Agent
from holon.runtime.tick import tick

STATE_TEMP = ".state.json.tmp."  # holon.store.atomic stages every replacement of state.json here


def _count_state_writes(fn) -> int:
    """Atomic replacements of state.json while `fn` runs (an audit hook cannot be removed, so it
    stays installed but counts only while `active`)."""
    count, active = [0], [True]

    def hook(event: str, args: tuple) -> None:
        if event == "open" and active[0] and os.path.basename(str(args[0])).startswith(STATE_TEMP):
            count[0] += 1

    sys.addaudithook(hook)
    try:
        fn()
    finally:
        active[0] = False
    return count[0]


def test_a_turn_writes_state_twice_however_many_rounds(agent, tmp_path):
    script = tmp_path / "s.jsonl"
    call = {"name": "ExecCommand", "arguments": {"cmd": "true", "login": False}}
    rounds = [
        {"text": "simple"},
        {"text": "look", "tool_calls": [{**call, "id": "c1"}]},
        {"text": "again", "tool_calls": [{**call, "id": "c2"}]},
        {"text": "done"},
    ]
    script.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    model = f"scripted/{script}"
    reports = []
    for text, n_rounds in (("one round", 1), ("three rounds", 3)):
        admit(agent, "cli_prompt", "operator_prompt", text_body(text))
        writes = _count_state_writes(lambda: reports.append(tick(agent, model=model)))
        turn = reports[-1].turns[0]
        assert turn["status"] == "completed", turn
        assert Agent(agent).state().last_turn.message_id == turn["message_id"]
        assert writes == 2, f"{text}: {writes} state writes"
        state = Agent(agent).state()
        assert state.token_usage.total_model_rounds == {1: 1, 3: 4}[n_rounds]
        assert state.status.value == "awake_idle" and state.current_run_id is None
        assert state.run_owner_pid is None and not state.inflight
        assert state.last_tick_at and state.last_brief_at and state.last_settled_turn_id
        wm = state.working_memory
        assert wm.last_turn_id == turn["turn_id"]
        # the delta its turn_context showed (revision 0, then 1) is marked shown at settle
        assert wm.last_prompted and wm.last_prompted_revision == {1: 0, 3: 1}[n_rounds]

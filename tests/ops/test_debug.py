"""holon.ops.debug: the next request is assembled read-only, even when it would compact."""

from __future__ import annotations

import json

from holon.agent import admission
from holon.agent.handle import Agent
from holon.ops import debug
from holon.runtime.tick import tick


def test_next_prompt_describes_a_compaction_without_doing_it(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "12000")
    call = {"name": "ExecCommand", "arguments": {"cmd": "printf '%*s' 6000 '' | tr ' ' z"}}
    rounds = []
    for i in range(3):
        rounds += [{"text": "", "tool_calls": [{**call, "id": f"c{i}"}]}, {"text": f"done {i}"}]
    model = script(*rounds)
    for i in range(3):
        admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body(f"go {i}"))
        tick(agent, model=model)
    # the last turn's own result is in the window; a smaller window must fold earlier turns
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "9000")
    before_state = agent.state_json.read_bytes()
    episodes = agent.context_episodes.read_bytes() if agent.context_episodes.exists() else b""
    doc = debug.next_prompt(agent, model)
    assert doc["manifest"]["compaction"]["planned"] is True
    assert agent.state_json.read_bytes() == before_state
    after = agent.context_episodes.read_bytes() if agent.context_episodes.exists() else b""
    assert after == episodes
    text = debug.render(doc)
    assert "the next round would fold" in text
    json.dumps(doc)  # the document is plain JSON
    window_start = Agent(agent).state().context.window_start
    assert doc["manifest"]["compaction"]["window_start"] > window_start

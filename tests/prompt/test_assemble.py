"""holon.prompt.assemble: the policy, the stable system blocks in contract order, the episode
block and the cache identity."""

from __future__ import annotations

from holon.agent import admission
from holon.agent.handle import Agent
from holon.context import fit, workingmemory
from holon.model.conversation import ToolResultItem, UserItem
from holon.model.messages import MessageEnvelope
from holon.prompt import assemble, skills
from holon.runtime.turn import context
from holon.runtime.turn.state import begin


def _frame(home, **kw):
    kw.setdefault("tool_guidance", ["GUIDE-1", "GUIDE-2"])
    return assemble.build_frame(home, **kw)


def _names(frame) -> list[str]:
    return [b.name for b in frame.system_blocks]


def test_frame_blocks_in_contract_order(agent, tmp_path):
    agent.agents_md.write_text("AGENT-RULES\n")
    (agent.memory / "self.md").write_text("# Self\nI like small diffs.\n")
    (agent.memory / "operator.md").write_text("\n# Operator\nPrefers short reports.")
    (agent.skills / "deploy").mkdir(parents=True, exist_ok=True)
    (agent.skills / "deploy" / "SKILL.md").write_text("x")
    (agent.skills / "audit").mkdir()
    (agent.skills / "audit" / "SKILL.md").write_text("x")
    (agent.skills / "no-skill-file").mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("WORKSPACE-RULES")
    frame = _frame(agent, workspace_root=ws)
    assert frame.system_prompt == assemble.POLICY
    assert _names(frame) == [
        "mode_guidance",
        "environment",
        "agent_instructions",
        "memory_self",
        "memory_operator",
        "workspace_instructions",
        "skills",
        "tool_guidance",
    ]
    texts = [b.text for b in frame.system_blocks]
    assert texts[0] == assemble.EVENT_GUIDANCE
    assert texts[1] == f"# Environment\nAgent: a\nAgent home: {agent.root}"
    assert texts[2] == f"# Agent instructions ({agent.agents_md})\n\nAGENT-RULES"
    self_md, operator_md = agent.memory / "self.md", agent.memory / "operator.md"
    assert texts[3] == f"# Agent memory: self ({self_md})\n\n# Self\nI like small diffs."
    assert (
        texts[4]
        == f"# Agent memory: operator ({operator_md})\n\n# Operator\nPrefers short reports."
    )
    assert texts[5] == f"# Workspace instructions ({ws})\n\nWORKSPACE-RULES"
    assert texts[6].splitlines() == [  # holon.prompt.skills (golden/prompts/skills_block.txt)
        "# Skills",
        skills.GUIDANCE,
        "- audit [agent]: (no description)",
        f"  {agent.skills / 'audit' / 'SKILL.md'}",
        "- deploy [agent]: (no description)",
        f"  {agent.skills / 'deploy' / 'SKILL.md'}",
    ]
    assert texts[7] == "# Tools\nGUIDE-1\n\nGUIDE-2"
    assert [b.cache_breakpoint for b in frame.system_blocks] == [False] * 7 + [True]
    assert frame.context_blocks == []  # no episode block
    assert frame.cache.agent_id == "a"
    # the policy is not repeated in the blocks
    assert not any(assemble.POLICY in t for t in texts)


def test_optional_blocks_are_left_out(agent):
    agent.agents_md.unlink()
    (agent.memory / "self.md").write_text("")
    (agent.memory / "operator.md").unlink()
    frame = _frame(agent, tool_guidance=[], workspace_root=agent.root)
    assert _names(frame) == ["mode_guidance", "environment"]
    assert [b.cache_breakpoint for b in frame.system_blocks] == [False, True]
    assert frame.context_blocks == []
    # the home is not a workspace of its own: its AGENTS.md is shown once, as the agent's
    agent.agents_md.write_text("AGENT-RULES")
    assert _names(_frame(agent, tool_guidance=[], workspace_root=agent.root)) == [
        "mode_guidance",
        "environment",
        "agent_instructions",
    ]


def test_memory_files_are_bounded_with_a_note(agent):
    big = "m" * (workingmemory.MEMORY_FILE_CHARS + 50)
    (agent.memory / "operator.md").write_text(big)
    (block,) = [b for b in _frame(agent).system_blocks if b.name == "memory_operator"]
    assert block.text == (
        f"# Agent memory: operator ({agent.memory / 'operator.md'})\n\n"
        + "m" * workingmemory.MEMORY_FILE_CHARS
        + "\n[… 50 more characters in memory/operator.md not shown; read the file]"
    )


def test_workspace_claude_md_is_the_fallback(agent, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("CLAUDE-RULES")
    texts = [b.text for b in _frame(agent, workspace_root=tmp_path).system_blocks]
    assert any(t.endswith("CLAUDE-RULES") for t in texts)
    (tmp_path / "AGENTS.md").write_text("AGENTS-RULES")
    texts = [b.text for b in _frame(agent, workspace_root=tmp_path).system_blocks]
    assert any(t.endswith("AGENTS-RULES") for t in texts)
    assert not any(t.endswith("CLAUDE-RULES") for t in texts)


def test_the_episode_block_is_the_first_context_block(agent):
    frame = _frame(
        agent,
        episode_block="# Earlier context\nEPISODES",
        working_memory_revision=7,
        compression_epoch=3,
    )
    (block,) = frame.context_blocks
    assert block.name == "episodes" and block.cache_breakpoint
    assert block.text == "# Earlier context\nEPISODES"
    assert "EPISODES" not in frame.system_prompt
    assert not any("EPISODES" in b.text for b in frame.system_blocks)
    assert frame.cache.working_memory_revision == 7 and frame.cache.compression_epoch == 3


def test_the_cache_key_follows_the_stable_part_only(agent):
    base = _frame(agent, tools_digest="d1", episode_block="E1")
    key, fingerprint = base.cache.prompt_cache_key, base.cache.context_fingerprint
    assert key.startswith("holon-a-")
    # the episode block changes at compaction: the key stays, the fingerprint moves
    other_episodes = _frame(agent, tools_digest="d1", episode_block="E2", compression_epoch=1)
    assert other_episodes.cache.prompt_cache_key == key
    assert other_episodes.cache.context_fingerprint != fingerprint
    no_episodes = _frame(agent, tools_digest="d1")
    assert no_episodes.cache.prompt_cache_key == key
    assert no_episodes.cache.context_fingerprint != fingerprint
    assert _frame(agent, tools_digest="d1", episode_block="E1").cache == base.cache
    # the tool catalog, AGENTS.md and the memory files are the stable part
    assert _frame(agent, tools_digest="d2", episode_block="E1").cache.prompt_cache_key != key
    agent.agents_md.write_text("NEW RULES")
    after_agents_md = _frame(agent, tools_digest="d1", episode_block="E1").cache.prompt_cache_key
    assert after_agents_md != key
    (agent.memory / "self.md").write_text("# Self\nlearned something")
    after_self = _frame(agent, tools_digest="d1", episode_block="E1").cache.prompt_cache_key
    assert after_self not in (key, after_agents_md)
    (agent.memory / "operator.md").write_text("# Operator\nnew preference")
    after_operator = _frame(agent, tools_digest="d1", episode_block="E1").cache.prompt_cache_key
    assert after_operator not in (key, after_agents_md, after_self)
    assert _frame(agent, tools_digest="d1", tool_guidance=["OTHER"]).cache.prompt_cache_key not in (
        key,
        after_operator,
    )


def test_the_cache_key_does_not_depend_on_the_clock(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "1800000000")
    a = _frame(agent, tools_digest="d")
    monkeypatch.setenv("HOLON_NOW", "1800009999")
    b = _frame(agent, tools_digest="d")
    assert a.cache == b.cache and a.system_blocks == b.system_blocks


def test_a_turn_longer_than_the_window_keeps_its_operator_message(agent, monkeypatch):
    """Hundreds of rounds in one turn: the message that started it stays the first item and the
    request stays within its budget (older rounds are summarized, then left out)."""
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "12000")
    a = Agent(agent)
    record = admission.admit(
        agent, "cli_prompt", "operator_prompt", admission.text_body("the task")
    )
    ts = begin(a, MessageEnvelope.model_validate(record))
    context.record_turn_context(a, ts)
    for i in range(300):
        call = {"id": f"c{i}", "name": "ExecCommand", "arguments": {"cmd": f"ls dir{i}"}}
        rnd = {"round_index": i, "text": f"step {i}", "tool_calls": [call]}
        ts.entries.append(a.transcript("assistant_round", turn_id=ts.turn_id, **rnd))
        ts.rounds.append(rnd)
        result = {
            "key": f"{i}:c{i}",
            "call_id": f"c{i}",
            "tool_name": "ExecCommand",
            "status": "success",
            "envelope": {"status": "success", "summary_text": f"exit 0, {i} files"},
            "rendered": f"output of round {i}\n" + "file.txt\n" * 40,
        }
        ts.entries.append(a.transcript("tool_result", turn_id=ts.turn_id, **result))
        ts.results[result["key"]] = result
    assembly = context.build_request(a, "scripted/x", ts)
    items = assembly.request.conversation
    assert isinstance(items[0], UserItem) and items[0].text.endswith("]\nthe task")
    assert items[0].text.startswith("[operator_prompt · origin operator")
    assert items[1].text.startswith("# Turn context")
    assert (
        items[2].text.startswith("[")
        and "earlier rounds of this turn are not shown" in items[2].text
    )
    manifest = assembly.manifest
    assert manifest["estimated_tokens"] <= manifest["prompt_budget"]
    (current,) = [b for b in manifest["blocks"] if b["name"] == "current_turn"]
    assert current["rounds_omitted"] > 0 and current["rounds_omitted"] % fit.STEP == 0
    # the newest round is there in full
    last = items[-1]
    assert isinstance(last, ToolResultItem) and last.call_id == "c299"
    assert last.content.startswith("output of round 299")

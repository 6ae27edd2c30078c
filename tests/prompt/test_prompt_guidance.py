"""The prompt a provider receives carries the ApplyPatch guidance of its exposure
(snapshots per provider)."""

from __future__ import annotations

import pytest
from golden_check import check_golden


@pytest.mark.parametrize(
    "model_ref,exposure",
    [
        ("openai/gpt-x", "freeform"),
        ("openai-codex/gpt-x", "freeform"),
        ("anthropic/claude-x", "json"),
        ("ollama/llama", "json"),
    ],
)
def test_system_prompt_has_apply_patch_guidance_per_provider(agent, model_ref, exposure):
    from holon.agent.handle import Agent
    from holon.patch.guidance import prompt_guidance
    from holon.prompt import assemble
    from holon.runtime.turn.context import build_request

    request = build_request(Agent(agent), model_ref).request
    # the guidance is a stable system block, after the policy (which stays the system prompt)
    assert request.frame.system_prompt == assemble.POLICY
    tools_block = request.frame.system_blocks[-1]
    assert tools_block.name == "tool_guidance" and tools_block.cache_breakpoint
    assert prompt_guidance(exposure) in tools_block.text
    other = prompt_guidance("json" if exposure == "freeform" else "freeform")
    assert not any(other in b.text for b in request.frame.system_blocks)
    assert other not in request.frame.system_prompt
    check_golden(f"prompts/tools_block_{model_ref.split('/')[0]}.txt", tools_block.text)

"""What a turn runs against: the model chain, the execution root, the tool context and the provider
request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from holon import clock, config
from holon.agent import budget
from holon.agent.handle import Agent
from holon.model.conversation import ProviderRequest, UserItem
from holon.patch.guidance import prompt_guidance
from holon.prompt import assemble, workqueue
from holon.providers.runner import model_chain as chain_of
from holon.store.atomic import read_json
from holon.tools import registry
from holon.tools.base import RenderPolicy, ToolContext
from holon.tools.definitions import definitions

DEFAULT_MAX_OUTPUT_TOKENS = 8192
FREEFORM_PROVIDERS = ("openai", "openai-codex")


def model_chain(agent: Agent, override: str | None = None) -> list[str] | None:
    """The model refs to try in order (primary, then fallbacks), or None when no model is
    configured."""
    primary, _ = budget.effective_model(agent, override)
    if not primary:
        return None
    return chain_of(primary, config.fallback_models())


def execution_root(agent: Agent) -> tuple[Path, Path]:
    """(execution root, working directory): the agent home unless a workspace is active."""
    state = agent.state()
    root = agent.home.root
    ws = read_json(agent.home.workspace_json, {}) or {}
    if state.active_workspace_id != "agent_home" and ws.get("execution_root"):
        root = Path(ws["execution_root"])
    cwd = Path(state.cwd) if state.cwd else root
    return root, cwd


def render_policy() -> RenderPolicy:
    cap = config.env_int("HOLON_MAX_TOOL_OUTPUT_TOKENS", "runtime.max_tool_output_tokens", 64000)
    cap = max(1, min(cap, 64000))
    default = config.env_int(
        "HOLON_DEFAULT_TOOL_OUTPUT_TOKENS", "runtime.default_tool_output_tokens", 8000
    )
    return RenderPolicy(default_tokens=max(1, min(default, cap)), max_tokens=cap)


def tool_context(
    agent: Agent,
    *,
    turn_id: str = "",
    call_id: str = "",
    message_id: str | None = None,
    round_text: str = "",
) -> ToolContext:
    root, cwd = execution_root(agent)
    return ToolContext(
        agent=agent,
        execution_root=root,
        cwd=cwd,
        policy=render_policy(),
        tool_call_id=call_id,
        turn_id=turn_id,
        message_id=message_id,
        round_text=round_text,
    )


def apply_patch_guidance(model_ref: str) -> str:
    """ApplyPatch guidance for the exposure this provider gets: freeform grammar or JSON `patch`."""
    provider = model_ref.split("/", 1)[0]
    return prompt_guidance("freeform" if provider in FREEFORM_PROVIDERS else "json")


def build_request(agent: Agent, model_ref: str, ts: Any = None) -> ProviderRequest:
    """The provider request for the next round: prompt frame, conversation window and tool
    catalog."""
    tools = registry.all_tools()
    defs = definitions(tools, "relaxed")
    digest = json.dumps([d.model_dump() for d in defs], sort_keys=True)
    guidance = [g for g in (getattr(t, "guidance", None) for t in tools) if g]
    if any(t.name == "ApplyPatch" for t in tools):
        guidance.append(apply_patch_guidance(model_ref))
    root, cwd = execution_root(agent)
    state = agent.state()
    context = [
        f"Agent: {agent.id}",
        f"Agent home: {agent.home.root}",
        f"Execution root: {root}",
        f"Working directory: {cwd}",
        f"Current time: {clock.now_iso()}",
        f"Status: {state.status.value}",
    ]
    trigger = read_json(agent.home.trigger_descriptor)
    if trigger and trigger.get("status") == "active":
        context.append(
            f"External trigger: {trigger['external_trigger_id']} active (wake_hint); its token is "
            "a capability secret held by your operator, never repeat or store it"
        )
    work = workqueue.projection(agent)
    if work:
        context += ["", work]
    frame = assemble.build_frame(
        agent.home,
        tool_guidance=guidance,
        workspace_root=root,
        context_lines=context,
        tools_digest=digest,
    )
    conversation = assemble.conversation(agent.home)
    reminder = workqueue.stale_reminder(agent, ts.rounds, ts.results) if ts is not None else None
    if reminder:
        conversation.append(
            UserItem(text=reminder)
        )  # provider-only: never written to the transcript
        agent.event("work_item_progress_reminder", turn_id=ts.turn_id, rounds=len(ts.rounds))
    return ProviderRequest(
        model_ref=model_ref,
        frame=frame,
        conversation=conversation,
        tools=defs,
        max_output_tokens=config.env_int(
            "HOLON_MAX_OUTPUT_TOKENS", "runtime.max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS
        ),
    )

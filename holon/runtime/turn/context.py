"""What a turn runs against: the model chain, the execution root, the tool context and the provider
request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon import config
from holon.agent import budget, profiles, workspaces
from holon.agent.handle import Agent
from holon.context import memoryfiles, window, workingmemory
from holon.mcp import config as mcp_config
from holon.model.conversation import UserItem
from holon.patch.guidance import prompt_guidance
from holon.prompt import request, turncontext, workqueue
from holon.providers.runner import model_chain as chain_of
from holon.tools import definitions, mcp_tool, registry
from holon.tools.base import RenderPolicy, Tool, ToolContext
from holon.tools.definitions import Catalog

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
    """(execution root, working directory) of the active workspace binding
    (holon.agent.workspaces); the agent home unless a workspace is active."""
    bound = workspaces.binding(agent)  # checked: `corrupt_state` names a bad workspace.json
    return Path(bound["execution_root"]), Path(bound["cwd"])


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


def catalog(
    model_ref: str, preset: str, extra: list[Tool] | None = None
) -> tuple[Catalog, list[str]]:
    """(tool catalog, tool guidance) as offered to this model for an agent with profile `preset`
    (holon.agent.profiles: only the tools it allows), `extra` (the agent's MCP tools) last. The
    catalog is built once per process for each tool set (holon.tools.definitions.catalog is
    keyed by the tools it is given)."""
    named = (registry.get(n) for n in profiles.allowed(preset, registry.names()))
    tools = [t for t in named if t is not None] + list(extra or [])
    freeform = model_ref.split("/", 1)[0] in FREEFORM_PROVIDERS
    tools_catalog = definitions.catalog(tools, "relaxed", freeform=freeform)
    guidance = [g for g in (getattr(t, "guidance", None) for t in tools) if g]
    if any(t.name == "ApplyPatch" for t in tools):
        guidance.append(apply_patch_guidance(model_ref))
    return tools_catalog, guidance


def mcp_tools(agent: Agent, *, record: bool = True) -> list[Tool]:
    """The agent's MCP tools (holon.tools.mcp_tool): none, and nothing of MCP imported, when no
    server is configured; from the cached listings otherwise (a server starts only to list).
    A server that failed to list just now is an event (`record`), and offers no tools."""
    if not mcp_config.configured():
        return []
    root, cwd = execution_root(agent)
    failed: list[dict[str, Any]] = []
    tools = mcp_tool.agent_tools(agent.home, root, cwd, failed)
    for failure in failed if record else []:
        agent.event(failure["kind"], **failure)
    return tools


def max_output_tokens() -> int:
    return config.env_int(
        "HOLON_MAX_OUTPUT_TOKENS", "runtime.max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS
    )


def record_turn_context(agent: Agent, ts: Any) -> None:
    """Write the turn-scoped context once, right after the turn's message, and hand the pending
    working-memory delta to it. The prompted base moves in the settle's state write (or the
    deferral's): a crash before it shows the same delta again next turn, never loses it. So do
    the memory files' edits since the model last saw them (holon.context.memoryfiles)."""
    root, cwd = execution_root(agent)
    state = agent.state()
    wm = state.working_memory
    delta = (
        workingmemory.delta(wm.last_prompted, workingmemory.render(wm.current))
        if wm.current
        else []
    )
    ctx = state.context
    if ctx.memory_basis is None:  # the first turn: the settle makes the files as they are the basis
        ts.memory_basis = memoryfiles.current(agent.home)
        edits, shown = [], memoryfiles.digests(ts.memory_basis)
    else:
        edits, shown = memoryfiles.edits(agent.home, ctx)
    text = turncontext.text(
        agent,
        execution_root=root,
        cwd=cwd,
        memory_delta=delta,
        revision=wm.revision,
        memory_edits=edits,
    )
    entry = agent.transcript(
        "turn_context",
        turn_id=ts.turn_id,
        message_id=ts.message.id,
        text=text,
        working_memory_revision=wm.revision,
        workspace_id=state.active_workspace_id,
        memory_shown=shown,
        compression_epoch=state.context.compression_epoch,
    )
    ts.entries.append(entry)
    ts.prompted_revision = wm.revision


def _calibration(agent: Agent, ts: Any) -> dict[str, float]:
    """The persisted calibration, advanced by the rounds this turn has already sent (they are
    persisted only when the turn settles)."""
    return window.calibrated(agent.state().context.calibration, ts.observed if ts else [])


def build_request(
    agent: Agent,
    model_ref: str,
    ts: Any = None,
    *,
    persist: bool = True,
    reason: str = "budget",
) -> request.Assembly:
    """The provider request for the next round, within the model's budget (see
    holon.prompt.request)."""
    extra = mcp_tools(agent, record=persist)
    tools, guidance = catalog(model_ref, profiles.preset_of(agent.home), extra)
    # workspace guidance follows the anchor, not a worktree the execution root may be in
    anchor = Path(workspaces.binding(agent)["workspace_anchor"])
    current = None
    if ts is not None:
        if ts.view is None:
            ts.view = request.CurrentTurn(turn_id=ts.turn_id, offset=ts.offset, entries=ts.entries)
        current = ts.view
    assembly, prior = request.assemble_request(
        agent,
        model_ref,
        defs=tools.defs,
        tools_json=tools.json,
        guidance=guidance,
        workspace_root=anchor,
        max_output_tokens=max_output_tokens(),
        current=current,
        persist=persist,
        cache=ts.prior if ts is not None else None,
        reason=reason,
        calibration=_calibration(agent, ts),
    )
    if ts is not None:
        ts.prior = prior
        reminder = workqueue.stale_reminder(agent, ts.rounds, ts.results)
        if reminder:  # provider-only: never written to the transcript
            assembly.request.conversation.append(UserItem(text=reminder))
            agent.event("work_item_progress_reminder", turn_id=ts.turn_id, rounds=len(ts.rounds))
    return assembly

"""What a turn runs against: the model chain, the provider request, the tool context, budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from holon import clock, config
from holon.prompt import assemble
from holon.model.conversation import ProviderFailure, ProviderRequest, TokenUsage
from holon.agent.handle import Agent
from holon.store.atomic import read_json
from holon.tools import registry
from holon.tools.base import RenderPolicy, ToolContext

DEFAULT_MAX_OUTPUT_TOKENS = 8192


def effective_model(agent: Agent, override: str | None = None) -> tuple[str | None, str]:
    """(model ref, source): --model, then the agent's override, then the runtime default."""
    if override:
        return override, "invocation"
    state = agent.state()
    if state.model_override:
        return state.model_override, "agent_override"
    return config.default_model(), "runtime_default"


def model_chain(agent: Agent, override: str | None = None) -> list[str] | None:
    from holon.providers.runner import model_chain as chain

    primary, _ = effective_model(agent, override)
    if not primary:
        return None
    return chain(primary, config.fallback_models())


def execution_root(agent: Agent) -> tuple[Path, Path]:
    state = agent.state()
    root = agent.home.root
    ws = read_json(agent.home.dot / "workspace.json", {}) or {}
    if state.active_workspace_id != "agent_home" and ws.get("execution_root"):
        root = Path(ws["execution_root"])
    cwd = Path(state.cwd) if state.cwd else root
    return root, cwd


def render_policy() -> RenderPolicy:
    cap = config.env_int("HOLON_MAX_TOOL_OUTPUT_TOKENS", "runtime.max_tool_output_tokens", 64000)
    cap = max(1, min(cap, 64000))
    default = config.env_int("HOLON_DEFAULT_TOOL_OUTPUT_TOKENS", "runtime.default_tool_output_tokens", 8000)
    return RenderPolicy(default_tokens=max(1, min(default, cap)), max_tokens=cap)


def tool_context(agent: Agent, *, turn_id: str = "", call_id: str = "", message_id: str | None = None,
                 round_text: str = "") -> ToolContext:
    root, cwd = execution_root(agent)
    return ToolContext(agent_id=agent.id, home=agent.home.root, execution_root=root, cwd=cwd,
                       policy=render_policy(), tool_call_id=call_id, turn_id=turn_id, message_id=message_id,
                       round_text=round_text)


def tool_catalog() -> list[Any]:
    return registry.all_tools()


def build_request(agent: Agent, model_ref: str, ts: Any = None) -> ProviderRequest:
    from holon.runtime import workqueue
    from holon.tools.definitions import definitions

    tools = tool_catalog()
    defs = definitions(tools, "relaxed")
    digest = json.dumps([d.model_dump() for d in defs], sort_keys=True)
    guidance = [g for g in (getattr(t, "guidance", None) for t in tools) if g]
    if any(t.name == "ApplyPatch" for t in tools):
        guidance.append(apply_patch_guidance(model_ref))
    root, cwd = execution_root(agent)
    state = agent.state()
    context = [f"Agent: {agent.id}", f"Agent home: {agent.home.root}", f"Execution root: {root}",
               f"Working directory: {cwd}", f"Current time: {clock.now_iso()}",
               f"Status: {state.status.value}"]
    trigger = read_json(agent.home.triggers / "default.json")
    if trigger and trigger.get("status") == "active":
        context.append(f"External trigger: {trigger['external_trigger_id']} active (wake_hint); its token is a "
                       "capability secret held by your operator, never repeat or store it")
    work = workqueue.projection(agent)
    if work:
        context += ["", work]
    frame = assemble.build_frame(agent.home, tool_guidance=guidance, workspace_root=root, context_lines=context,
                                 tools_digest=digest)
    conversation = assemble.conversation(agent.home)
    reminder = workqueue.stale_reminder(agent, ts.rounds, ts.results) if ts is not None else None
    if reminder:
        from holon.model.conversation import UserItem

        conversation.append(UserItem(text=reminder))  # provider-only: never written to the transcript
        agent.event("work_item_progress_reminder", turn_id=ts.turn_id, rounds=len(ts.rounds))
    return ProviderRequest(model_ref=model_ref, frame=frame, conversation=conversation,
                           tools=defs, max_output_tokens=config.env_int(
                               "HOLON_MAX_OUTPUT_TOKENS", "runtime.max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS))


FREEFORM_PROVIDERS = ("openai", "openai-codex")


def apply_patch_guidance(model_ref: str) -> str:
    """ApplyPatch guidance for the exposure this provider gets: freeform grammar or JSON `patch`."""
    from holon.patch.guidance import prompt_guidance

    provider = model_ref.split("/", 1)[0]
    return prompt_guidance("freeform" if provider in FREEFORM_PROVIDERS else "json")


def call_tool(agent: Agent, ts: Any, call: dict[str, Any], round_data: dict[str, Any]) -> tuple[dict, str]:
    ctx = tool_context(agent, turn_id=ts.turn_id, call_id=call["id"], message_id=ts.message["id"],
                       round_text=round_data.get("text", ""))
    tool = registry.get(call["name"])
    if tool is not None and tool.mutates and round_data.get("stop_reason") == "max_output_tokens":
        from holon.tools import envelope

        err = {"kind": "truncated_mutation_tool_call",
               "message": f"{call['name']} was not run: the model's output hit its token limit, so the call "
                          "may be cut off", "details": {"tool_name": call["name"]},
               "recovery_hint": "send the call again in a shorter response (for ApplyPatch, split the patch)",
               "retryable": True}
        env = envelope.failure(call["name"], err)
        return env, envelope.render_error(env)
    env, rendered = registry.call(ctx, call["name"], call.get("arguments"), call.get("raw_arguments"))
    return env, rendered


# -- budgets -----------------------------------------------------------------

def budget(agent: Agent) -> dict[str, int]:
    data = read_json(agent.home.dot / "budget.json", {}) or {}
    ident = agent.identity().get("budget") or {}
    out = {}
    for key in ("daily_tokens", "turn_tokens"):
        value = data.get(key, ident.get(key))
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and value > 0:
            out[key] = value
    return out


def today() -> str:
    return clock.now_iso()[:10]


def check_budget(agent: Agent, turn_usage: TokenUsage) -> None:
    """Refuse the next provider request when a token budget is spent."""
    limits = budget(agent)
    if not limits:
        return
    turn_total = turn_usage.total_tokens
    if "turn_tokens" in limits and turn_total >= limits["turn_tokens"]:
        raise ProviderFailure("budget_exhausted", f"turn token budget spent ({turn_total} of "
                              f"{limits['turn_tokens']} tokens)", category="runtime",
                              diagnostics={"budget": "turn_tokens"})
    if "daily_tokens" in limits:
        used = int(agent.state().token_usage_by_day.get(today(), 0)) + turn_total
        if used >= limits["daily_tokens"]:
            raise ProviderFailure("budget_exhausted", f"daily token budget spent ({used} of "
                                  f"{limits['daily_tokens']} tokens today, UTC); it renews at 00:00 UTC",
                                  category="runtime", diagnostics={"budget": "daily_tokens"})

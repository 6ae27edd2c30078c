"""`holon model show|set|clear|budget|summaries AGENT`: per-agent model override, token budgets
and model-written episode summaries."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("model")
def model_group() -> None:
    """An agent's own model (instead of HOLON_MODEL), its token budgets and episode summaries."""


def _show(agent: str, as_json: bool) -> None:
    from holon.agent import budget
    from holon.agent.handle import Agent
    from holon.home import stateview
    from holon.home.registry import resolve

    a = Agent(resolve(agent))
    view = stateview.current(a.home)  # no pydantic when the stored state is current
    override = view["model_override"] if view is not None else a.state().model_override
    doc = {"agent_id": a.id, **budget.model_state(override), "budget": budget.limits(a)}
    if as_json:
        emit_json(doc)
        return
    click.echo(f"effective: {doc['effective_model'] or '(none)'} ({doc['source']})")
    click.echo(f"default:   {doc['runtime_default_model'] or '(none)'}")
    click.echo(f"fallbacks: {', '.join(doc['effective_fallback_models']) or '(none)'}")
    if doc["budget"]:
        click.echo("budget:    " + ", ".join(f"{k}={v}" for k, v in doc["budget"].items()))


@model_group.command("show")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def show_cmd(agent: str, as_json: bool) -> None:
    """Show AGENT's effective model, where it comes from, fallbacks and budgets."""
    _show(agent, as_json)


@model_group.command("set")
@click.argument("agent")
@click.argument("model_ref")
@click.option("--json", "as_json", is_flag=True, help="Print the new model state.")
def set_cmd(agent: str, model_ref: str, as_json: bool) -> None:
    """Override AGENT's model with MODEL_REF (provider/model) for future turns.

    MODEL_REF is checked as `holon prompt --model` checks it: a known provider, its key set (in
    the environment or `holon keys`), a scripted path that exists."""
    from holon.agent import budget
    from holon.agent.handle import Agent
    from holon.home.registry import resolve
    from holon.providers.resolve import preflight

    home = resolve(agent)
    preflight(model_ref, home=home.root)
    budget.set_override(Agent(home), model_ref)
    _show(agent, as_json)


@model_group.command("clear")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="Print the new model state.")
def clear_cmd(agent: str, as_json: bool) -> None:
    """Clear AGENT's override: back to the runtime default and fallback chain."""
    from holon.agent import budget
    from holon.agent.handle import Agent
    from holon.home.registry import resolve

    budget.set_override(Agent(resolve(agent)), None)
    _show(agent, as_json)


@model_group.command("budget")
@click.argument("agent")
@click.option(
    "--daily-tokens", type=click.IntRange(min=0), help="Tokens per UTC day (0 removes the limit)."
)
@click.option(
    "--turn-tokens", type=click.IntRange(min=0), help="Tokens per turn (0 removes the limit)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the model state with budgets.")
def budget_cmd(
    agent: str, daily_tokens: int | None, turn_tokens: int | None, as_json: bool
) -> None:
    """Show or set AGENT's token budgets, checked before every provider request across ticks."""
    from holon.agent import budget
    from holon.agent.handle import Agent
    from holon.home.registry import resolve

    budget.set_limits(Agent(resolve(agent)), daily_tokens=daily_tokens, turn_tokens=turn_tokens)
    _show(agent, as_json)


@model_group.command("summaries")
@click.argument("agent")
@click.argument("setting", required=False, type=click.Choice(["on", "off"]))
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def summaries_cmd(agent: str, setting: str | None, as_json: bool) -> None:
    """Show, or set with on|off, whether AGENT's model writes episode summaries.

    Off by default. When on, each episode a turn's settle closes gets a short summary written
    by the agent's model after the turn, recorded once beside the episode (its tokens count
    against the budgets); the prompt and memory search use it, and a failure keeps the
    deterministic summary."""
    from holon.agent.handle import Agent
    from holon.context import summaries
    from holon.home.registry import resolve

    a = Agent(resolve(agent))
    if setting is not None:
        summaries.set_enabled(a, setting == "on")
    state = a.state()
    doc = {
        "agent_id": a.id,
        "model_summaries": state.model_summaries,
        "pending": list(state.context.summaries_pending),
    }
    if as_json:
        emit_json(doc)
        return
    pending = f" ({len(doc['pending'])} episode(s) waiting)" if doc["pending"] else ""
    click.echo(f"model summaries: {'on' if doc['model_summaries'] else 'off'}{pending}")

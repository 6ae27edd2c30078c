"""`holon tool list|schema|call`: the tool catalog as the model (globally or one agent's, by its
profile) and the operator see it."""

from __future__ import annotations

import json

import click

from holon.cli.inputs import parse_json_object
from holon.cli.output import emit_json


@click.group("tool")
def tool_group() -> None:
    """Inspect built-in tools and call one in an agent's execution context."""


def _tool_or_usage(name: str):
    from holon.errors import UsageError
    from holon.ids import quote
    from holon.tools import registry

    tool = registry.get(name)
    if tool is None:
        raise UsageError(
            f"no tool named {quote(name)}",
            kind="unknown_tool",
            hint="valid tools: " + ", ".join(registry.names()),
        )
    return tool


@tool_group.command("list")
@click.argument("agent", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Name, family and description of each tool as JSON."
)
def list_cmd(agent: str | None, as_json: bool) -> None:
    """List the built-in tools, or AGENT's own catalog.

    Without AGENT: every tool (built-ins and plugins). With AGENT: the tools its profile preset
    (`profile_preset` in `holon status AGENT --json`) offers its model; a private_child has no
    NotifyOperator, UseWorkspace or DetachWorkspace, and no plugins.
    """
    from holon.tools import registry

    if agent is None:
        tools = registry.all_tools()
    else:
        from holon.agent import profiles
        from holon.home.registry import resolve

        preset = profiles.preset_of(resolve(agent))
        tools = [t for t in registry.all_tools() if profiles.allows(preset, t.name)]
    rows = [
        {"name": t.name, "family": t.family, "mutates": t.mutates, "description": t.description}
        for t in tools
    ]
    if as_json:
        emit_json(rows)
        return
    width = max((len(t["name"]) for t in rows), default=0)
    for t in rows:
        click.echo(f"{t['name']:<{width}}  {t['description'].split('. ')[0].rstrip('.')}")


@tool_group.command("schema")
@click.argument("name")
@click.option(
    "--provider",
    type=click.Choice(["openai", "anthropic"]),
    help="Print the tool definition as that provider receives it.",
)
@click.option(
    "--strict", is_flag=True, help="Strict emission (every property required, optionals nullable)."
)
def schema_cmd(name: str, provider: str | None, strict: bool) -> None:
    """Print NAME's source JSON schema, or its emitted definition with --provider/--strict."""
    from holon.tools import schema
    from holon.tools.definitions import definition

    tool = _tool_or_usage(name)
    if provider is None and not strict:
        emit_json(schema.source_schema(tool.Args))
        return
    d = definition(tool, "strict" if strict else "relaxed")
    if provider == "openai":
        emit_json(
            {
                "type": "function",
                "name": d.name,
                "description": d.description,
                "parameters": d.input_schema,
                "strict": d.strict,
            }
        )
    elif provider == "anthropic":
        emit_json({"name": d.name, "description": d.description, "input_schema": d.input_schema})
    else:
        emit_json(d.input_schema)


@tool_group.command("call")
@click.argument("agent")
@click.argument("name")
@click.option(
    "--input",
    "input_",
    default="{}",
    show_default=True,
    help="Arguments: a JSON object literal, @path, or - for stdin.",
)
@click.option(
    "--render", is_flag=True, help="Print the model-visible receipt instead of the envelope."
)
def call_cmd(agent: str, name: str, input_: str, render: bool) -> None:
    """Run tool NAME for AGENT in its current execution context.

    Prints the canonical result envelope as JSON (or the receipt with
    --render). Exit 0 on success, 1 when the tool returned an error envelope
    (`unsupported_agent_profile_capability` for a tool AGENT's profile does not
    offer: nothing runs), 2 for bad usage: invalid JSON, a non-object, an unknown agent, or an
    unknown tool NAME (a typo on the command line is usage, not a tool result).
    """
    from holon.home.registry import resolve
    from holon.mcp import names
    from holon.ops import tools

    home = resolve(agent)
    if not names.is_mcp(name):  # an MCP tool is the agent's own: the call finds it, or says not
        _tool_or_usage(name)
    arguments = parse_json_object(input_, "--input")
    outcome = tools.call(home, name, arguments)
    click.echo(
        outcome.rendered if render else json.dumps(outcome.envelope, ensure_ascii=False, indent=2)
    )
    click.get_current_context().exit(0 if outcome.envelope["status"] == "success" else 1)

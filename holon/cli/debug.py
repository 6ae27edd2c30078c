"""`holon debug`: look inside what the runtime would do, without doing it."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("debug")
def debug_group() -> None:
    """Inspect what the runtime would send or do next, read-only."""


@debug_group.command("prompt")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="One JSON document: manifest and request.")
@click.option(
    "--model", help="Assemble for this model ref instead of the agent's (provider/model)."
)
def prompt_cmd(agent: str, as_json: bool, model: str | None) -> None:
    """Print what AGENT's next provider request would contain.

    Shows a manifest first (each block with its estimated tokens, the
    episodes and conversation items included, the context window and
    budget, the prompt cache key and fingerprint), then the system blocks,
    the episode block, the tool names and the conversation. Nothing is
    written: a compaction the request would need is only described. (An MCP
    server without a cached tool list is started and listed, and that list
    cached, as the next turn would.)
    """
    from holon.home.registry import resolve
    from holon.ops import debug

    doc = debug.next_prompt(resolve(agent), model)
    if as_json:
        emit_json(doc)
        return
    click.echo(debug.render(doc))

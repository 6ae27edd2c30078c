"""`holon init` and `holon agents`."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.command("init")
@click.argument("path", required=False)
@click.option("--agent-id", "agent_id", help="Agent id (default: the directory name, or `main`).")
@click.option(
    "--template",
    default="holon-default",
    show_default=True,
    help="Built-in template id, ~/.agents/templates/<id>, or a local template directory.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the new agent as JSON.")
def init_cmd(path: str | None, agent_id: str | None, template: str, as_json: bool) -> None:
    """Create an agent home at PATH (default: $HOLON_HOME/agents/ID) and register it.

    Fails closed: an existing home or a non-empty directory is never
    overwritten, and a half-made home is removed.
    """
    from holon.home.init import init_home

    home = init_home(path, agent_id, template)
    if as_json:
        emit_json({"agent_id": home.agent_id, "home": str(home.root)})
    else:
        click.echo(f"created agent {home.agent_id} at {home.root}")


@click.command("agents")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def agents_cmd(as_json: bool) -> None:
    """List agents (registered and under $HOLON_HOME/agents) with their status."""
    from holon.home import registry
    from holon.store.atomic import read_json

    rows = []
    for home in registry.all_homes():
        state = read_json(home.state_json, {}) or {}
        ident = read_json(home.agent_json, {}) or {}
        if ident.get("visibility") == "private":
            continue
        rows.append(
            {
                "agent_id": home.agent_id,
                "status": state.get("status", "unknown"),
                "queue_depth": home.queue.depth(),
                "home": str(home.root),
            }
        )
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['agent_id']}\t{r['status']}\tqueue={r['queue_depth']}\t{r['home']}")

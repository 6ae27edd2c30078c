"""`holon init`, and `holon agents [list|forget]`."""

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
    overwritten, and a half-made home is removed. The built-in templates
    (holon-default, holon-developer) are first seeded into
    ~/.agents/templates; a copy you edited there is kept and used.
    """
    from holon.home import template_seed
    from holon.home.init import init_home

    template_seed.seed()  # the built-in templates into ~/.agents/templates (best effort)
    home = init_home(path, agent_id, template)
    if as_json:
        emit_json({"agent_id": home.agent_id, "home": str(home.root)})
    else:
        click.echo(f"created agent {home.agent_id} at {home.root}")


# the subcommand is optional (`holon agents` lists): said explicitly, so that every click this
# runs under (older ones print `COMMAND` either way) renders the same usage and man page
@click.group("agents", invoke_without_command=True, subcommand_metavar="[COMMAND] [ARGS]...")
@click.option("--all", "show_all", is_flag=True, help="Private agents too, with their identity.")
@click.option("--json", "as_json", is_flag=True, help="List as one JSON document.")
@click.pass_context
def agents_cmd(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """List agents (registered and under $HOLON_HOME/agents) with their status.

    `holon agents` is `holon agents list`; `holon agents forget ID` unregisters one. Private
    agents (children spawned by another agent) are left out unless --all is given. A home that
    is gone or unreadable is listed as `missing` or `broken`, with the problem and the file at
    fault; the listing itself still succeeds.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd, show_all=show_all, as_json=as_json)


@agents_cmd.command("list")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Private agents too; each row adds visibility, kind and owner (the lineage parent).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(show_all: bool, as_json: bool) -> None:
    """List agents (registered and under $HOLON_HOME/agents) with their status.

    Columns: id, status, queue depth, home; a `missing` or `broken` agent adds the problem and
    the file at fault (JSON fields `problem` and `file`). Private agents are listed only with
    --all, which adds the columns visibility/kind and owner= (JSON fields `visibility`, `kind`,
    `ownership`, `lineage_parent_agent_id`).
    """
    from holon.ops.doctor import list_agents

    rows = list_agents(include_private=show_all)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        from holon.paths import agents_dir

        click.echo(
            f"no agents{'' if show_all else ' (private ones show with --all)'} in {agents_dir()} "
            "or the registry; create one with `holon init --agent-id NAME`"
        )
    for r in rows:
        depth = "-" if r["queue_depth"] is None else r["queue_depth"]
        line = f"{r['agent_id'] or '-'}\t{r['status']}\tqueue={depth}"
        if show_all:
            line += f"\t{r['visibility'] or '-'}/{r['kind'] or '-'}"
            line += f"\towner={r['lineage_parent_agent_id'] or '-'}"
        line += f"\t{r['home']}"
        click.echo(line + (f"\t{r['problem']}: {r['file']}" if "problem" in r else ""))


@agents_cmd.command("forget")
@click.argument("agent_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print what was forgotten as JSON.")
def forget_cmd(agent_id: str, as_json: bool) -> None:
    """Remove agent ID from $HOLON_HOME/registry.json; its home and files are left untouched.

    Use it for a registered home that was deleted or moved. An agent under $HOLON_HOME/agents is
    found by its directory, not the registry: move or delete the directory instead (exit 2).
    """
    from holon.home import registry

    path = registry.forget(agent_id)
    if as_json:
        emit_json({"agent_id": agent_id, "home": path, "forgotten": True})
    else:
        click.echo(f"forgot agent {agent_id}; its home {path} was not touched")

"""`holon mcp list|tools|add|remove|enable|disable`: tools from Model Context Protocol servers."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("mcp")
def mcp_group() -> None:
    """Tools from Model Context Protocol servers, configured in config.toml.

    A server is a `[mcp_servers.NAME]` table in $HOLON_HOME/config.toml, the shape Codex uses:
    `command`, `args`, `env`, `cwd` for a stdio server (run inside the agent's sandbox for the
    length of a tick), or `url` with `bearer_token_env` (a key from `holon keys`) and `headers`
    for streamable HTTP; `enabled`, `enabled_tools`, `disabled_tools`, `startup_timeout_s` (10)
    and `tool_timeout_s` (60). The model sees its tools as `mcp__<server>__<tool>`. An agent's
    `.holon/mcp.json` turns servers on or off for it (`holon mcp enable|disable AGENT NAME`); a
    private child uses only the servers its parent grants (`--children`).
    """


@mcp_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(as_json: bool) -> None:
    """List the configured servers: transport, status, tool count and last error.

    The status is what the newest tick (or `holon mcp tools`) of any agent found: ok, error,
    unknown (never listed yet) or disabled. `holon doctor` starts each server to check it.
    """
    from holon.home import registry
    from holon.mcp import admin

    rows = admin.rows(registry.all_homes())
    if as_json:
        emit_json({"servers": rows})
        return
    if not rows:
        click.echo("no MCP servers (add one: holon mcp add NAME -- COMMAND [ARGS...])")
    for r in rows:
        tools = "-" if r["tools"] is None else str(r["tools"])
        click.echo(f"{r['name']}\t{r['transport']}\t{r['status']}\t{tools} tools\t{r['target']}")
        if r["last_error"]:
            error = r["last_error"]
            click.echo(f"  last error: {error['kind']}: {error['message']}")


@mcp_group.command("tools")
@click.argument("agent")
@click.option("--refresh", is_flag=True, help="List every server again instead of the cache.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def tools_cmd(agent: str, refresh: bool, as_json: bool) -> None:
    """List the MCP tools AGENT's model sees, and whether each schema is sent strict.

    Servers whose tool list is not cached yet are started and listed (and stopped again).
    """
    from holon.ops import mcp

    rows = mcp.tool_rows(agent, refresh=refresh)
    if as_json:
        emit_json({"tools": rows})
        return
    for r in rows:
        strict = "strict" if r["strict"] else "non-strict"
        first = (r["description"].splitlines() or [""])[0][:80]
        click.echo(f"{r['name']}\t{r['server']}\t{strict}\t{first}")


@mcp_group.command("add", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="A streamable HTTP server instead of a command.")
@click.option("--bearer-token-env", help="The key (holon keys, or the environment) to send.")
@click.option("--env", "env", multiple=True, help="KEY=VALUE for a stdio server (repeatable).")
def add_cmd(
    name: str, command: tuple[str, ...], url: str | None, bearer_token_env: str | None, env
) -> None:
    """Add server NAME: `holon mcp add NAME -- CMD [ARGS...]` or `holon mcp add NAME --url URL`.

    \b
      holon mcp add time -- mcp-server-time --local-timezone UTC
      holon mcp add docs --url https://example.com/mcp --bearer-token-env DOCS_TOKEN
    """
    from holon.errors import UsageError
    from holon.mcp import admin

    if bool(command) == bool(url):
        raise UsageError(
            "give either a command after `--` or --url",
            hint="holon mcp add NAME -- CMD [ARGS...]  or  holon mcp add NAME --url URL",
        )
    pairs = dict(e.partition("=")[::2] for e in env)
    admin.add(name, command=list(command), url=url, env=pairs, bearer_token_env=bearer_token_env)
    click.echo(f"added MCP server {name}")


@mcp_group.command("enable")
@click.argument("agent")
@click.argument("name")
@click.option("--children", is_flag=True, help="Grant it to AGENT's private children instead.")
def enable_cmd(agent: str, name: str, children: bool) -> None:
    """Let AGENT use server NAME (in its .holon/mcp.json), whatever config.toml's `enabled`."""
    _choose(agent, name, on=True, children=children)


@mcp_group.command("disable")
@click.argument("agent")
@click.argument("name")
@click.option("--children", is_flag=True, help="Withdraw it from AGENT's private children.")
def disable_cmd(agent: str, name: str, children: bool) -> None:
    """Keep AGENT from using server NAME (in its .holon/mcp.json)."""
    _choose(agent, name, on=False, children=children)


def _choose(agent: str, name: str, *, on: bool, children: bool) -> None:
    from holon.home.registry import resolve
    from holon.mcp import admin

    admin.choose(resolve(agent), name, on=on, children=children)
    who = f"{agent}'s private children" if children else agent
    click.echo(f"{'enabled' if on else 'disabled'} MCP server {name} for {who}")


@mcp_group.command("remove")
@click.argument("name")
def remove_cmd(name: str) -> None:
    """Remove server NAME from config.toml."""
    from holon.mcp import admin

    admin.remove(name)
    click.echo(f"removed MCP server {name}")

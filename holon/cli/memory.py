"""`holon memory search|get|rebuild`: the agent's memory index from the shell."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("memory")
def memory_group() -> None:
    """Search what an agent has written and done: briefs, episodes, work items, memory files,
    messages and commands. The index lives in .holon/indexes/memory.sqlite3 and is brought up to
    date, or rebuilt, by every search."""


@memory_group.command("search")
@click.argument("agent")
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True, help="Most results (1-50).")
@click.option(
    "--all-workspaces",
    is_flag=True,
    help="Search every workspace, not only the active one and agent-wide memory.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every field.")
def search_cmd(agent: str, query: str, limit: int, all_workspaces: bool, as_json: bool) -> None:
    """Search AGENT's memory for QUERY, best match first.

    Every word must match (when few records have them all, records with
    some are ranked too); OR between words offers alternatives, "quoted
    words" keep a phrase, and word* matches a prefix. Chinese, Japanese and
    Korean text is found by any two adjacent characters. Each result shows
    its source_ref, which `holon memory get` expands.
    """
    from holon.home.registry import resolve
    from holon.memory import index

    doc = index.search(resolve(agent), query, limit=limit, include_all_workspaces=all_workspaces)
    if as_json:
        emit_json(doc)
        return
    if doc.get("stale"):
        click.echo("(the index could not be updated; results may be stale)", err=True)
    if not doc["results"]:
        click.echo("no results", err=True)
    if doc["match"] == "any" and doc["results"]:
        click.echo("(few records have every word; records with some are ranked too)", err=True)
    for r in doc["results"]:
        click.echo(f"{r['source_ref']}  {r['updated_at'][:16]}  [{r['kind']}] {r['title']}")
        click.echo(f"    {r['snippet']}")


@memory_group.command("get")
@click.argument("agent")
@click.argument("source_ref")
@click.option(
    "--max-chars",
    type=int,
    default=12_000,
    show_default=True,
    help="Most characters of content (1-50000).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document: provenance and content.")
def get_cmd(agent: str, source_ref: str, max_chars: int, as_json: bool) -> None:
    """Print the exact text behind SOURCE_REF (from `holon memory search`)."""
    from holon.home.registry import resolve
    from holon.memory import index

    doc = index.get(resolve(agent), source_ref, max_chars=max_chars)
    if as_json:
        emit_json(doc)
        return
    text = doc["content"]
    click.echo(text, nl=not text.endswith("\n"))
    if doc["truncated"]:
        click.echo(
            f"(truncated: {len(text)} of {doc['total_chars']} characters; use --max-chars)",
            err=True,
        )


@memory_group.command("rebuild")
@click.argument("agents", nargs=-1)
@click.option("--all", "all_agents", is_flag=True, help="Every registered agent.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document per agent, in a list.")
def rebuild_cmd(agents: tuple[str, ...], all_agents: bool, as_json: bool) -> None:
    """Delete the memory index of AGENTS (or --all) and build it again from its sources."""
    from holon.errors import UsageError
    from holon.home.registry import all_homes, resolve
    from holon.memory import index

    if bool(agents) == all_agents:
        raise UsageError(
            "name the agents to rebuild, or pass --all",
            kind="missing_agent" if not agents else "usage",
            hint="holon memory rebuild AGENT, or holon memory rebuild --all",
        )
    homes = all_homes() if all_agents else [resolve(a) for a in agents]
    done = []
    for home in homes:
        doc = index.rebuild(home)
        done.append(doc)
        if not as_json:
            kinds = ", ".join(f"{n} {k}" for k, n in doc["by_kind"].items()) or "nothing"
            click.echo(f"{doc['agent_id']}: {doc['documents']} records ({kinds})")
    if as_json:
        emit_json(done)

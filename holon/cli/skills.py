"""`holon skills list`: the skills an agent sees, by scope, with their active state."""

from __future__ import annotations

import click

from holon.cli.output import emit_json
from holon.safetext import one_line


@click.group("skills")
def skills_group() -> None:
    """Skills an agent can use (SKILL.md workflows, by scope).

    A skill is a directory holding a SKILL.md, found in the agent home
    (skills/, then .agents/skills, .codex/skills, .claude/skills), in the
    bound workspace (.agents/skills, .codex/skills,
    .claude/skills) and, for the default agent only, in the user's home
    (~/.agents/skills, ~/.codex/skills, ~/.claude/skills). The first existing
    root of each scope is used; a name in a more specific scope (workspace,
    then agent, then user) hides the same name elsewhere."""


@skills_group.command("list")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every field.")
def list_cmd(agent: str, as_json: bool) -> None:
    """List the skills AGENT sees: name, scope, active state, description
    and SKILL.md path.

    A skill becomes active (turn_active) when a command of the agent reads
    its SKILL.md or runs one of its scripts, and stays active for the
    session (session_active) once that turn completes. A problem with a
    skill's front matter is shown below it.
    """
    from holon.agent.handle import Agent
    from holon.home.registry import resolve
    from holon.runtime.turn.skills import listing

    found = listing(Agent(resolve(agent)))
    if as_json:
        emit_json({"skills": found})
        return
    if not found:
        click.echo("no skills", err=True)
    for s in found:
        name, path = one_line(s["name"]), one_line(s["path"], 1000)
        click.echo(
            f"{name}  [{s['scope']}]  {s['active'] or 'inactive'}  {s['description'] or '-'}"
        )
        click.echo(f"    {path}")
        if s["problem"]:
            click.echo(f"    problem: {s['problem']}")

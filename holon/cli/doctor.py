"""`holon doctor [--json] [AGENT...]`: HOLON_HOME, config, scheduler, and for each agent its model,
credentials, last tick and failure, dead letters, stuck tasks and stalled work."""

from __future__ import annotations

import click


@click.command("doctor")
@click.argument("agents", nargs=-1, metavar="[AGENT]...")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every finding.")
@click.option(
    "--repair",
    "--fix",
    "repair",
    is_flag=True,
    help="First set aside and rebuild what holon can: an unreadable registry.json (from the "
    "homes under $HOLON_HOME/agents), run state or wake hint, and write a missing "
    "$HOLON_HOME/.gitignore; each action is listed. --fix is the same.",
)
def doctor_cmd(agents: tuple[str, ...], as_json: bool, repair: bool) -> None:
    """Check the installation and every agent; each problem comes with the command that fixes it.

    What an unattended tick would run into: the HOLON_HOME in use (the first line), whether
    config.toml parses, whether a scheduler entry ticks this HOLON_HOME with a command that
    exists, and for each agent (all of them, or the AGENTs named) its model and where its key
    comes from, a home that is gone or corrupt, the last tick and last failure, dead letters,
    stuck tasks and work that waits with no tick; its last activity, what it waits on (its
    operator, a task, a timer, a provider outage and the next retry), action_required records
    no operator message has answered, a failing notify hook, and files its prompt leaves out
    (AGENTS.md, a memory file, a skill or a plan that is a symlink out of its directory, not a
    regular file or too large), and a HOLON_HOME without its .gitignore. Reads only, unless
    --repair (or --fix).

    Exit codes: 0 when no finding is an error (warnings included); 1 when any finding is an
    error; 2 for an unknown AGENT.
    """
    from holon.cli.output import emit_json
    from holon.ops import doctor

    repaired = None
    if repair:
        from holon.ops.repair import repair as run_repair

        repaired = run_repair(agents)
    report = doctor.run(agents)
    if as_json:
        emit_json(report if repaired is None else {**report, "repaired": repaired})
    else:
        for action in repaired or ():
            click.echo(f"repaired: {action['file']}: {action['action']} ({action['detail']})")
        click.echo(render(report))
    click.get_current_context().exit(1 if report["status"] == "error" else 0)


def render(report: dict) -> str:
    import shlex

    lines = [f"HOLON_HOME={shlex.quote(report['holon_home'])}"]
    lines += _findings(report["findings"], "")
    for agent in report["agents"]:
        lines.append(f"agent {agent['agent_id']} ({agent['home']})")
        lines += _findings(agent["findings"], "  ")
    return "\n".join(lines)


def _findings(findings: list[dict], indent: str) -> list[str]:
    out = []
    for f in findings:
        out.append(f"{indent}[{f['status']}] {f['check']}: {f['message']}")
        if f["fix"]:
            out.append(f"{indent}    fix: {f['fix']}")
    return out

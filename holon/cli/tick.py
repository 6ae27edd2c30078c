"""`holon tick`: run due work. The idle path imports nothing beyond click and the stdlib."""

from __future__ import annotations

import click


@click.command("tick")
@click.argument("agents", nargs=-1)
@click.option(
    "--all",
    "all_agents",
    is_flag=True,
    help="Every registered agent and every home under $HOLON_HOME/agents.",
)
@click.option("--until-idle", is_flag=True, help="Keep running turns until the queue is empty.")
@click.option("--wait", is_flag=True, help="Wait for a running tick instead of exiting at once.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document describing what ran.")
@click.option("--model", help="Model ref for this tick (provider/model).")
def tick_cmd(
    agents: tuple[str, ...],
    all_agents: bool,
    until_idle: bool,
    wait: bool,
    as_json: bool,
    model: str | None,
) -> None:
    """Lock each agent, recover, fire due timers, run one turn (or until idle), persist, exit.

    A second tick on the same agent exits 0 at once (unless --wait).
    Exit 1 if a turn failed; 3 if a named agent is paused or stopped with work queued.
    """
    from holon.agent.due import due_reasons
    from holon.errors import UsageError
    from holon.home import registry

    if not agents and not all_agents:
        raise UsageError(
            "name an AGENT or pass --all", kind="missing_agent", hint="holon tick --all"
        )
    homes = registry.all_homes() if all_agents else [registry.resolve(a) for a in agents]
    reports = []
    code = 0
    for home in homes:
        if not wait and not due_reasons(home):
            reports.append({"agent_id": home.agent_id, "outcome": "idle"})
            continue
        from holon.runtime.tick import tick

        report = tick(home, until_idle=until_idle, model=model, wait=wait).to_dict()
        reports.append(report)
        if any(t["status"] == "failed" for t in report.get("turns", [])):
            code = max(code, 1)
        if report["outcome"] in ("paused", "stopped") and not all_agents:
            code = 3
    _print(reports, as_json)
    click.get_current_context().exit(code)


def _print(reports: list[dict], as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps({"agents": reports}, ensure_ascii=False, indent=2))
        return
    for r in reports:
        if r["outcome"] == "idle" and not r.get("fired") and not r.get("recovered"):
            continue
        line = f"{r['agent_id']}: {r['outcome']}"
        for t in r.get("turns", []):
            line += f"\n  {t['message_id']} {t['status']}"
        if r.get("dead_lettered"):
            line += f"\n  dead-lettered: {', '.join(r['dead_lettered'])}"
        if r["outcome"] in ("paused", "stopped"):
            line += f"\nhint: run `holon resume {r['agent_id']}` to process its queue"
        click.echo(line, err=r["outcome"] in ("paused", "stopped"))

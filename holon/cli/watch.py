"""`holon watch [AGENT ...] [--all]`: tick whenever a queue, timer or task needs it, until
interrupted."""

from __future__ import annotations

import click


@click.command("watch")
@click.argument("agents", nargs=-1)
@click.option(
    "--all", "all_agents", is_flag=True, help="Every known agent (re-listed on each pass)."
)
@click.option("--model", help="Model ref for the ticks (provider/model).")
@click.option("--quiet", is_flag=True, help="Print nothing about turns.")
def watch_cmd(agents: tuple[str, ...], all_agents: bool, model: str | None, quiet: bool) -> None:
    """Run in the foreground: within a second of a message arriving, a timer falling due or a task
    finishing, run a tick. Ctrl-C or SIGTERM exits between turns."""
    from holon.errors import UsageError
    from holon.home import registry
    from holon.runtime.watch import Watcher

    if not agents and not all_agents:
        raise UsageError(
            "name an AGENT or pass --all", kind="missing_agent", hint="holon watch --all"
        )
    fixed = [registry.resolve(a) for a in agents]

    def homes() -> list:
        return registry.all_homes() if all_agents else fixed

    def report(r: dict) -> None:
        if not quiet and r.get("turns"):
            for t in r["turns"]:
                click.echo(f"{r['agent_id']}: {t['message_id']} {t['status']}")

    watcher = Watcher(homes, model=model, on_report=report)
    watcher.install_signals()
    watcher.run()

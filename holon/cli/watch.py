"""`holon watch [AGENT ...] [--all] [--shard K/N]`: tick whenever a queue, timer or task needs it,
until interrupted."""

from __future__ import annotations

import click


@click.command("watch")
@click.argument("agents", nargs=-1)
@click.option(
    "--all",
    "all_agents",
    is_flag=True,
    help="Every known agent, new ones included: driven by the host due index.",
)
@click.option(
    "--shard",
    metavar="K/N",
    help="With --all: only the agents of shard K of N (K from 0 to N-1, by a hash of the agent "
    "id); run N watchers, on one host or several sharing the home directory.",
)
@click.option("--model", help="Model ref for the ticks (provider/model).")
@click.option("--quiet", is_flag=True, help="Print nothing: no start line, no turns.")
def watch_cmd(
    agents: tuple[str, ...], all_agents: bool, shard: str | None, model: str | None, quiet: bool
) -> None:
    """Run in the foreground: soon after a message arrives, a timer falls due or a task
    finishes, run a tick. Ctrl-C or SIGTERM exits between turns."""
    from holon.errors import UsageError
    from holon.home import registry

    if not agents and not all_agents:
        raise UsageError(
            "name an AGENT or pass --all", kind="missing_agent", hint="holon watch --all"
        )
    if shard is not None and not all_agents:
        raise UsageError(
            "--shard goes with --all", kind="bad_shard", hint="holon watch --all --shard 0/2"
        )

    def report(r: dict) -> None:
        if r.get("error"):
            click.echo(f"{r['agent_id']}: error {r['error']}", err=True)
        if not quiet and r.get("turns"):
            for t in r["turns"]:
                click.echo(f"{r['agent_id']}: {t['message_id']} {t['status']}{_why(t)}")

    if all_agents:
        from holon.home.shard import parse
        from holon.runtime.watch import IndexWatcher

        chosen = parse(shard) if shard is not None else None
        watcher = IndexWatcher(shard=chosen, model=model, on_report=report)
    else:
        from holon.runtime.watch import Watcher

        fixed = [registry.resolve(a) for a in agents]
        watcher = Watcher(lambda: fixed, model=model, on_report=report)  # type: ignore[assignment]
    watcher.install_signals()
    what = "every agent" if all_agents else ", ".join(h.agent_id for h in fixed)
    where = f" (shard {shard})" if shard else ""
    if not quiet:
        click.echo(f"holon watch: watching {what}{where}; Ctrl-C to stop", err=True)
    watcher.run()


def _why(turn: dict) -> str:
    """`: <summary>` for a failed or deferred turn, from its failure artifact."""
    if turn.get("status") not in ("failed", "deferred"):
        return ""
    summary = (turn.get("failure_artifact") or {}).get("summary") or turn.get("final_text")
    return f": {' '.join(str(summary).split())[:300]}" if summary else ""

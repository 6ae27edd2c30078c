"""`holon tick`: run due work. Its options and per-agent tick are here; the pass and the report
are `holon.cli.ticking`'s, which a scheduler's idle tick runs without click (`holon.cli.tickfast`).
The idle path imports nothing beyond click and the stdlib."""

from __future__ import annotations

import click


@click.command("tick")
@click.argument("agents", nargs=-1)
@click.option(
    "--all",
    "all_agents",
    is_flag=True,
    help="Every registered agent and every home under $HOLON_HOME/agents (those the host due "
    "index names, and all of them on a periodic full pass).",
)
@click.option(
    "--shard",
    metavar="K/N",
    help="With --all: only the agents of shard K of N (K from 0 to N-1, by a hash of the agent "
    "id), so N processes, on one host or several sharing the home directory, split the agents.",
)
@click.option(
    "--until-idle",
    is_flag=True,
    help="Keep running turns until the queue is empty. With --all, pass over the agents again "
    "until a pass finds no work: a child spawned and the task_result it sends back run in the "
    "same command.",
)
@click.option("--wait", is_flag=True, help="Wait for a running tick instead of exiting at once.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document describing what ran.")
@click.option("--model", help="Model ref for this tick (provider/model).")
@click.option(
    "--commit",
    is_flag=True,
    help="After each agent's settled turns, commit its home if the home is the top of a git "
    "repository, with the brief's first line as the message (also: [git] commit_after_turn = "
    "true in config.toml).",
)
@click.option(
    "--log",
    is_flag=True,
    help="For schedulers: append the report to $HOLON_HOME/logs/tick.log (with the time; kept "
    "to 1 MiB and 3 older files) and print nothing when the tick succeeds. When it fails, the "
    "report and `log: <path>` go to stderr. A run with nothing to report writes nothing.",
)
def tick_cmd(
    agents: tuple[str, ...],
    all_agents: bool,
    until_idle: bool,
    wait: bool,
    as_json: bool,
    model: str | None,
    commit: bool,
    log: bool,
    shard: str | None,
) -> None:
    """Lock each agent, recover, fire due timers, run one turn (or until idle), persist, exit.

    A second tick on the same agent exits 0 at once (unless --wait).
    Exit 1 if a turn failed or an agent could not be ticked (with --all, a broken home is
    reported with the file at fault and the others still run); 3 if a named agent is paused or
    stopped with work queued.
    """
    from holon.cli import ticking

    reports: list[dict] = []

    def tick_one(home, reraise: bool) -> dict:
        return _one(home, until_idle, model, wait, commit, reraise)

    def run() -> int:
        return ticking.run(
            agents, all_agents, reports, tick_one, until_idle=until_idle, wait=wait, shard=shard
        )

    ctx = click.get_current_context()
    if not log:
        code = run()
        ticking.show(reports, as_json, click.echo)
        ctx.exit(code)
    ctx.exit(ticking.logged(_conflict if as_json else run, reports, agents, all_agents, click.echo))


def _conflict() -> int:
    from holon.errors import UsageError

    raise UsageError(
        "--log and --json cannot be used together",
        kind="conflicting_options",
        hint="use --log in scheduler entries and --json to read the report yourself",
    )


def _one(home, until_idle, model, wait, commit, reraise: bool = False) -> dict:
    """One agent's tick and its report; with --all, a failure is reported, never raised."""
    from holon.ops import tickreport
    from holon.runtime.tick import tick

    try:
        report = tick(home, until_idle=until_idle, model=model, wait=wait).to_dict()
    except Exception as exc:  # with --all, one agent's failure never stops the others
        if reraise:
            raise
        return tickreport.error_report(home, exc)
    if report.get("turns") and tickreport.commits(commit):
        from holon.ops.commit import commit_turns

        warning = commit_turns(home, report["turns"])
        if warning:
            report["commit_warning"] = warning
    return report

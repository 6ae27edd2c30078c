"""`holon tick`: run due work. The idle path imports nothing beyond click and the stdlib."""

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
    reports: list[dict] = []
    if not log:
        code = _tick(agents, all_agents, until_idle, wait, model, commit, reports, shard)
        _print(reports, as_json)
        click.get_current_context().exit(code)

    def run() -> int:
        if as_json:
            from holon.errors import UsageError

            raise UsageError(
                "--log and --json cannot be used together",
                kind="conflicting_options",
                hint="use --log in scheduler entries and --json to read the report yourself",
            )
        return _tick(agents, all_agents, until_idle, wait, model, commit, reports, shard)

    _logged(run, reports, " ".join(["--all"] * all_agents + list(agents)))


def _tick(
    agents: tuple[str, ...],
    all_agents: bool,
    until_idle: bool,
    wait: bool,
    model: str | None,
    commit: bool,
    reports: list[dict],
    shard: str | None = None,
) -> int:
    """Tick the agents, appending each one's report to `reports` as it ends; the exit code. One
    agent that cannot be ticked is reported and the others still run."""
    from holon.errors import UsageError
    from holon.ops import tickreport

    if not agents and not all_agents:
        raise UsageError(
            "name an AGENT or pass --all", kind="missing_agent", hint="holon tick --all"
        )
    if all_agents:
        from holon.home.shard import parse
        from holon.runtime.sweep import sweep

        if agents:
            raise UsageError(
                "name AGENTs or pass --all, not both",
                kind="conflicting_options",
                hint="holon tick --all",
            )
        chosen = parse(shard) if shard is not None else None
        tick_one = lambda h: _one(h, until_idle, model, wait, commit)  # noqa: E731
        for _ in range(tickreport.MAX_PASSES if until_idle else 1):
            done: list[dict] = []
            sweep(tick_one, done.append, shard=chosen)
            tickreport.merge(reports, done)
            if not any(tickreport.progressed(r) for r in done):
                break  # a pass where no agent had work: every agent is idle
    else:
        if shard is not None:
            raise UsageError(
                "--shard goes with --all", kind="bad_shard", hint="holon tick --all --shard 0/2"
            )
        _named(agents, until_idle, wait, model, commit, reports)
    return tickreport.exit_code(reports, all_agents)


def _named(agents, until_idle, wait, model, commit, reports: list[dict]) -> None:
    from holon.agent.due import due_reasons
    from holon.home import registry

    for home in [registry.resolve(a) for a in agents]:
        if not wait and not due_reasons(home):
            reports.append({"agent_id": home.agent_id, "outcome": "idle"})
            continue
        reports.append(_one(home, until_idle, model, wait, commit, reraise=True))


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


def _logged(run, reports: list[dict], what: str) -> None:
    """Run the tick for a scheduler: the report goes to the log; stderr hears only of failures."""
    from holon.errors import HolonError
    from holon.ops import tickreport

    try:
        code, error = run(), []
    except HolonError as exc:
        code, error = exc.exit_code, tickreport.error_lines(exc.kind, exc.message, exc.hint)
    except Exception as exc:  # a bug: logged, then reported by the root group as usual
        error = tickreport.error_lines("internal_error", f"{type(exc).__name__}: {exc}")
        _report(what, 1, tickreport.texts(reports), error, print_error=False)
        raise
    lines = tickreport.texts(reports)
    if tickreport.nothing_to_log(code, lines, error):
        click.get_current_context().exit(0)  # nothing to report: nothing is written
    click.get_current_context().exit(_report(what, code, lines, error))


def _report(
    what: str, code: int, lines: list[str], error: list[str], print_error: bool = True
) -> int:
    """Log the run (holon.ops.tickreport.log); when it failed, print the report and where the
    log is on stderr. Returns the exit code."""
    from holon.ops import tickreport

    code, trailer = tickreport.log(what, code, lines, error)
    if code:
        for line in lines + (error if print_error else []) + trailer:
            click.echo(line, err=True)
    return code


def _print(reports: list[dict], as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps({"agents": reports}, ensure_ascii=False, indent=2))
        return
    from holon.ops import tickreport

    for line, to_stderr in tickreport.lines(reports):
        click.echo(line, err=to_stderr)

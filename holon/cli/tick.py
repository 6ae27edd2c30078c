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
        for _ in range(MAX_PASSES if until_idle else 1):
            done: list[dict] = []
            sweep(tick_one, done.append, shard=chosen)
            _merge(reports, done)
            if not any(_progressed(r) for r in done):
                break  # a pass where no agent had work: every agent is idle
    else:
        if shard is not None:
            raise UsageError(
                "--shard goes with --all", kind="bad_shard", hint="holon tick --all --shard 0/2"
            )
        _named(agents, until_idle, wait, model, commit, reports)
    return _exit_code(reports, all_agents)


# --all --until-idle passes again while a pass ran anything: work one agent's turn made for
# another (a child it spawned, the task_result that wakes its parent) runs in the same command
MAX_PASSES = 100


def _progressed(report: dict) -> bool:
    """Did the agent's tick do work another agent may now be waiting on?"""
    return bool(report.get("turns") or report.get("recovered") or report.get("fired"))


def _merge(reports: list[dict], more: list[dict]) -> None:
    """Add one pass's reports, an agent already reported once keeping one report: its lists
    extended, its outcome the later one unless that is `idle`."""
    seen = {(r.get("agent_id"), r.get("home")): r for r in reports}
    for r in more:
        old = seen.get((r.get("agent_id"), r.get("home")))
        if old is None:
            reports.append(r)
            seen[(r.get("agent_id"), r.get("home"))] = r
            continue
        for key, value in r.items():
            if isinstance(value, list):
                old[key] = old.get(key, []) + value
            elif key != "outcome" or value != "idle":
                old[key] = value


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
    from holon.errors import HolonError
    from holon.runtime.tick import tick

    try:
        report = tick(home, until_idle=until_idle, model=model, wait=wait).to_dict()
    except Exception as exc:  # with --all, one agent's failure never stops the others
        if reraise:
            raise
        report = {"agent_id": home.agent_id, "outcome": "error", "home": str(home.root)}
        if isinstance(exc, HolonError):
            hint = f" ({exc.hint})" if exc.hint else ""
            report["error"] = f"{exc.kind}: {exc.message}{hint}"
        else:
            report["error"] = f"internal_error: {type(exc).__name__}: {exc}"
        return report
    if report.get("turns") and _commits(commit):
        from holon.ops.commit import commit_turns

        warning = commit_turns(home, report["turns"])
        if warning:
            report["commit_warning"] = warning
    return report


def _exit_code(reports: list[dict], all_agents: bool) -> int:
    """1 if a turn failed or an agent could not be ticked; 3 if a named agent is paused or
    stopped with work queued; else 0."""
    code = 0
    for r in reports:
        if r["outcome"] in ("missing", "broken", "error"):
            code = max(code, 1)
        if any(t["status"] == "failed" for t in r.get("turns", [])):
            code = max(code, 1)
        if r["outcome"] in ("paused", "stopped") and not all_agents:
            code = 3
    return code


def _commits(flag: bool) -> bool:
    """--commit, or `[git] commit_after_turn = true` in config.toml."""
    if flag:
        return True
    from holon import config

    return config.get("git.commit_after_turn") is True


def _logged(run, reports: list[dict], what: str) -> None:
    """Run the tick for a scheduler: the report goes to the log; stderr hears only of failures."""
    from holon.errors import HolonError

    try:
        code, error = run(), []
    except HolonError as exc:
        code, error = exc.exit_code, _error_lines(exc.kind, exc.message, exc.hint)
    except Exception as exc:  # a bug: logged, then reported by the root group as usual
        error = _error_lines("internal_error", f"{type(exc).__name__}: {exc}")
        _report(what, 1, _texts(reports), error, print_error=False)
        raise
    lines = _texts(reports)
    if code == 0 and not lines and not error:
        click.get_current_context().exit(0)  # nothing to report: nothing is written
    click.get_current_context().exit(_report(what, code, lines, error))


def _report(
    what: str, code: int, lines: list[str], error: list[str], print_error: bool = True
) -> int:
    """Append the run's block to tick.log; when the run failed, or the log cannot be written,
    print the report and where the log is on stderr. Returns the exit code."""
    from holon.ops import ticklog

    path = ticklog.log_path()
    try:
        ticklog.append(path, ticklog.block(what, code, lines + error))
        trailer = [f"log: {path}"]
    except OSError as exc:
        why = f"cannot write {path}: {exc.strerror or exc}"
        trailer = _error_lines("log_failed", why, "check that $HOLON_HOME/logs is writable")
        code = code or 1
    if code:
        for line in lines + (error if print_error else []) + trailer:
            click.echo(line, err=True)
    return code


def _error_lines(kind: str, message: str, hint: str | None = None) -> list[str]:
    """An error as the root group prints it."""
    return [f"holon: {kind}: {message}"] + ([f"hint: {hint}"] if hint else [])


def _texts(reports: list[dict]) -> list[str]:
    """The report for the log and for stderr: a failed turn also says why."""
    return [text for text, _ in _lines(reports, why=True)]


def _lines(reports: list[dict], why: bool = False) -> list[tuple[str, bool]]:
    """The human report: (text, for stderr) per agent that did something."""
    out = []
    for r in reports:
        if r["outcome"] == "idle" and not r.get("fired") and not r.get("recovered"):
            continue
        line = f"{r['agent_id']}: {r['outcome']}"
        for t in r.get("turns", []):
            line += f"\n  {t['message_id']} {t['status']}"
            if t["status"] == "deferred" and t.get("not_before"):
                line += f" until {t['not_before']} (provider outage; retried then)"
            failure = t.get("failure_artifact") or {}
            if why and failure.get("summary"):
                line += f"\n    {failure.get('kind') or 'failed'}: {failure['summary']}"
        if r.get("held"):
            line += f"\n  {r['held']['message']}"
        if r.get("capped"):
            line += (
                f"\n  stopped at its cap of {r['capped']['cap']} self-driven turns in a row "
                f"(`holon briefs {r['agent_id']}` says how to go on)"
            )
        if r.get("dead_lettered"):
            line += f"\n  dead-lettered: {', '.join(r['dead_lettered'])}"
        if r["outcome"] in ("missing", "broken"):
            line += f" {r.get('home')}: {r.get('problem')}"
            line += f"\n  file: {r['file']}" if r.get("file") else ""
            line += "\nhint: fix or restore the file, or `holon agents forget ID` for a home gone"
        if r["outcome"] == "error":
            line += f" {r.get('home')}\n  {r.get('error')}"
        if r.get("commit_warning"):
            line += f"\n  commit: {r['commit_warning']}"
        if r["outcome"] in ("paused", "stopped"):
            line += f"\nhint: run `holon resume {r['agent_id']}` to process its queue"
        out.append((line, r["outcome"] in ("paused", "stopped", "missing", "broken", "error")))
    return out


def _print(reports: list[dict], as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps({"agents": reports}, ensure_ascii=False, indent=2))
        return
    for line, to_stderr in _lines(reports):
        click.echo(line, err=to_stderr)

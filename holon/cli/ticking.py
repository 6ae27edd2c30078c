"""What `holon tick` does and prints, without click: the click command (`tick.py`) and the idle
fast path (`tickfast.py`) run these same functions, so the two cannot drift apart. Each agent
that has due work is handed to `tick_one(home, reraise)`: the click command ticks it, the fast
path stops and leaves the whole command line to click. Text goes out through `echo(text,
err=...)` (click.echo, or `write` where click is not loaded)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

Echo = Callable[..., Any]


def run(
    agents: tuple[str, ...],
    all_agents: bool,
    reports: list[dict],
    tick_one: Callable[[Any, bool], dict],
    *,
    until_idle: bool = False,
    wait: bool = False,
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
        for _ in range(tickreport.MAX_PASSES if until_idle else 1):
            done: list[dict] = []
            sweep(lambda h: tick_one(h, False), done.append, shard=chosen)
            tickreport.merge(reports, done)
            if not any(tickreport.progressed(r) for r in done):
                break  # a pass where no agent had work: every agent is idle
    else:
        if shard is not None:
            raise UsageError(
                "--shard goes with --all", kind="bad_shard", hint="holon tick --all --shard 0/2"
            )
        _named(agents, wait, reports, tick_one)
    return tickreport.exit_code(reports, all_agents)


def _named(agents, wait: bool, reports: list[dict], tick_one) -> None:
    from holon.agent.due import due_reasons
    from holon.home import registry

    for home in [registry.resolve(a) for a in agents]:
        if not wait and not due_reasons(home):
            reports.append({"agent_id": home.agent_id, "outcome": "idle"})
            continue
        reports.append(tick_one(home, True))


def write(text: str, err: bool = False) -> None:
    """click.echo's output where click is not loaded: the text, a newline, flushed."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def show(reports: list[dict], as_json: bool, echo: Echo) -> None:
    """Print the report: one JSON document, or a line per agent that did something."""
    if as_json:
        import json

        echo(json.dumps({"agents": reports}, ensure_ascii=False, indent=2))
        return
    from holon.ops import tickreport

    for line, to_stderr in tickreport.lines(reports):
        echo(line, err=to_stderr)


def logged(
    run: Callable[[], int], reports: list[dict], agents: tuple[str, ...], all_agents: bool, echo
) -> int:
    """Run the tick for a scheduler: the report goes to the log; stderr hears only of failures.
    Returns the exit code."""
    from holon.errors import HolonError
    from holon.ops import tickreport

    what = " ".join(["--all"] * all_agents + list(agents))
    try:
        code, error = run(), []
    except HolonError as exc:
        code, error = exc.exit_code, tickreport.error_lines(exc.kind, exc.message, exc.hint)
    except Exception as exc:  # a bug: logged, then reported by the root group as usual
        error = tickreport.error_lines("internal_error", f"{type(exc).__name__}: {exc}")
        _report(what, 1, tickreport.texts(reports), error, echo, print_error=False)
        raise
    lines = tickreport.texts(reports)
    if tickreport.nothing_to_log(code, lines, error):
        return 0  # nothing to report: nothing is written
    return _report(what, code, lines, error, echo)


def _report(
    what: str, code: int, lines: list[str], error: list[str], echo: Echo, print_error: bool = True
) -> int:
    """Log the run (holon.ops.tickreport.log); when it failed, print the report and where the
    log is on stderr. Returns the exit code."""
    from holon.ops import tickreport

    code, trailer = tickreport.log(what, code, lines, error)
    if code:
        for line in lines + (error if print_error else []) + trailer:
            echo(line, err=True)
    return code

"""`holon timer create|list|cancel AGENT`: one-shot, repeating and cron timers with an optional
guard."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("timer")
def timer_cmd() -> None:
    """Timers: one file each in the agent home; a due timer becomes a timer_tick message on the next
    tick."""


@timer_cmd.command("create")
@click.argument("agent")
@click.option(
    "--after", help="One-shot after a duration with its unit: 90s, 10m, 2h, 1d (at most 3660d)."
)
@click.option("--every", help="Repeat on a fixed planned schedule: 15m, 1h (from 1s to 3660d).")
@click.option(
    "--cron",
    "cron_expr",
    help="Cron expression in the agent time zone: exactly five fields (minute hour day-of-month "
    'month day-of-week), e.g. "0 8 * * 1-5".',
)
@click.option("--tz", help="IANA time zone for --cron (default: local).")
@click.option("--text", default="", help="Text the timer_tick message carries.")
@click.option("--if", "guard", help="Guard command: when due, wake the agent only if it exits 0.")
@click.option("--json", "as_json", is_flag=True)
def create_cmd(
    agent: str,
    after: str | None,
    every: str | None,
    cron_expr: str | None,
    tz: str | None,
    text: str,
    guard: str | None,
    as_json: bool,
) -> None:
    """Create a timer for AGENT."""
    from holon.home.registry import resolve
    from holon.ops import timers

    timer = timers.create(
        resolve(agent), after=after, every=every, cron=cron_expr, tz=tz, text=text, guard=guard
    )
    if as_json:
        emit_json(timer)
    else:
        click.echo(f"{timer['id']} next at {timer['due_at']}")


@timer_cmd.command("list")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True)
def list_cmd(agent: str, as_json: bool) -> None:
    """List AGENT's timers, soonest first."""
    from holon.home.registry import resolve
    from holon.ops import timers

    listed = timers.listing(resolve(agent))
    if as_json:
        emit_json(listed)
        return
    from holon.agent.timers import span

    if not listed:
        click.echo(f"no timers; `holon timer create {agent} --after 10m --text ...` adds one")
    for t in listed:
        what = {
            "once": "once",
            "every": f"every {span(float(t.get('interval_s') or 0))}",
            "cron": f"cron {t.get('cron')} {t.get('tz')}",
        }
        guard = f"  if: {t['guard']}" if t.get("guard") else ""
        text = f"  {t['text']!r}" if t.get("text") else ""
        click.echo(f"{t['id']}  {t['due_at']}  {what[t['schedule']]}{text}{guard}")


@timer_cmd.command("cancel")
@click.argument("agent")
@click.argument("timer_id")
def cancel_cmd(agent: str, timer_id: str) -> None:
    """Cancel one timer."""
    from holon.home.registry import resolve
    from holon.ops import timers

    timers.cancel(resolve(agent), timer_id)
    click.echo(f"cancelled {timer_id}")

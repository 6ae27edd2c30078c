"""`holon feed [AGENT ...|--all] [--level info|verbose|debug] [--follow] [--since-seq N]
[--jsonl]`: the operator's feed across agents, from the presentation layer (holon.feed)."""

from __future__ import annotations

import click

from holon.cli.output import emit_jsonl

POLL_S = 0.2  # how often --follow looks for new records (and new agents, with --all)
LEVELS = click.Choice(["info", "verbose", "debug"])


@click.command("feed")
@click.argument("agents", nargs=-1)
@click.option("--all", "all_agents", is_flag=True, help="Every known agent, new ones included.")
@click.option(
    "--level",
    type=LEVELS,
    default="info",
    show_default=True,
    help="info: action_required, work_done, turn_result; verbose adds progress and tool rows; "
    "debug adds every trace record.",
)
@click.option("--follow", "-f", is_flag=True, help="Keep printing new records until stopped.")
@click.option(
    "--since-seq", type=click.IntRange(min=0), default=0, help="Only records with event_seq > N."
)
@click.option("--jsonl", "as_jsonl", is_flag=True, help="One operator record per line (JSON).")
def feed_cmd(
    agents: tuple[str, ...],
    all_agents: bool,
    level: str,
    follow: bool,
    since_seq: int,
    as_jsonl: bool,
) -> None:
    """Print what needs the operator, what got done and how turns ended, across agents.

    Each line is one operator record derived from an audit event (its
    event_seq is the replay cursor). With --follow, waits for new records
    (and, with --all, new agents) and ends when its reader goes away.
    """
    from holon.errors import UsageError
    from holon.feed import present
    from holon.feed.reader import Feed
    from holon.home import registry

    if bool(agents) == all_agents:
        raise UsageError(
            "name one or more AGENTs, or pass --all",
            kind="missing_agent",
            hint="holon feed --all, or holon feed AGENT",
        )
    named = [registry.resolve(a) for a in agents]
    feed = Feed(registry.all_homes if all_agents else lambda: named, level, since_seq)
    show = (lambda r: emit_jsonl([r])) if as_jsonl else (lambda r: click.echo(present.line(r)))
    for record in feed.backlog():
        show(record)
    if follow:
        _follow(feed, show)


def _follow(feed, show) -> None:
    """New records until interrupted or until stdout's reader is gone (holon.cli.pipes)."""
    import sys

    from holon.cli.pipes import reader_gone

    try:
        while True:
            for record in feed.poll():
                show(record)
            sys.stdout.flush()
            if reader_gone(POLL_S):
                return
    except KeyboardInterrupt:
        return

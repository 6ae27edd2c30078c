"""`holon queue list|retry|drop AGENT [ID]`: an agent's queued messages and dead letters."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("queue")
def queue_group() -> None:
    """An agent's queued messages and dead letters: list them, queue a dead letter again, or
    drop a message."""


@queue_group.command("list")
@click.argument("agent")
@click.option("--dead", is_flag=True, help="The dead letters instead of the waiting messages.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(agent: str, dead: bool, as_json: bool) -> None:
    """List AGENT's waiting and in-progress messages (or, with --dead, its dead letters):
    state, message id, kind, priority, delivery attempts and the start of the text."""
    from holon.home.registry import resolve
    from holon.ops import queue

    rows = queue.listing(resolve(agent), dead)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no dead letters" if dead else "no messages waiting")
    for r in rows:
        click.echo(
            f"{r['message_id'] or r['file']}  {r['state']:<11} {r['kind'] or '-':<14} "
            f"{r['priority'] or '-':<10} attempts={r['delivery_attempts'] or 0}  {r['preview']}"
        )


@queue_group.command("retry")
@click.argument("agent")
@click.argument("message_id", metavar="ID")
def retry_cmd(agent: str, message_id: str) -> None:
    """Queue dead letter ID again, with its delivery attempts reset; the next tick runs it."""
    from holon.home.registry import resolve
    from holon.ops import queue

    queue.retry(resolve(agent), message_id)
    click.echo(f"queued {message_id} again")


@queue_group.command("drop")
@click.argument("agent")
@click.argument("message_id", metavar="ID")
def drop_cmd(agent: str, message_id: str) -> None:
    """Remove waiting message or dead letter ID for good (recorded in the events)."""
    from holon.home.registry import resolve
    from holon.ops import queue

    out = queue.drop(resolve(agent), message_id)
    click.echo(f"dropped {out['state']} message {message_id}")

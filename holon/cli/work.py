"""`holon work list|show|create|close|cancel AGENT`: work items; `create` is the control-plane
enqueue, `close` and `cancel` end one."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("work")
def work_cmd() -> None:
    """Work items of an agent (ledger/work_items.jsonl, plan in work-items/<id>/plan.md)."""


@work_cmd.command("list")
@click.argument("agent")
@click.option("--all", "include_completed", is_flag=True, help="Include completed items.")
@click.option("--json", "as_json", is_flag=True)
def list_cmd(agent: str, include_completed: bool, as_json: bool) -> None:
    """List work items with their readiness."""
    from holon.home.registry import resolve
    from holon.ops import work as workcontrol

    rows = workcontrol.listing(resolve(agent), include_completed)
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['id']}  {r['readiness']:<20} {r['objective']}")


@work_cmd.command("show")
@click.argument("agent")
@click.argument("work_item_id")
def show_cmd(agent: str, work_item_id: str) -> None:
    """Show one work item as JSON (plan_artifact, completion_report)."""
    from holon.home.registry import resolve
    from holon.ops import work as workcontrol

    emit_json(workcontrol.show(resolve(agent), work_item_id))


@work_cmd.command("create")
@click.argument("agent")
@click.argument("objective")
@click.option("--plan", help="Initial plan prose for plan.md (`-` for stdin).")
@click.option("--json", "as_json", is_flag=True)
def create_cmd(agent: str, objective: str, plan: str | None, as_json: bool) -> None:
    """Queue a new work item for AGENT without a transcript message; the current item is never
    replaced."""
    from holon.cli.output import read_text_arg
    from holon.home.registry import resolve
    from holon.ops import work as workcontrol

    rec = workcontrol.create(
        resolve(agent), objective, read_text_arg(plan, "--plan") if plan else None
    )
    if as_json:
        emit_json(rec)
    else:
        click.echo(rec["id"])


@work_cmd.command("close")
@click.argument("agent")
@click.argument("work_item_id")
@click.option("--note", help="Why, in a few words: it becomes the item's report.")
def close_cmd(agent: str, work_item_id: str, note: str | None) -> None:
    """Mark a work item done for the agent: it leaves its focus and the listing."""
    _end(agent, work_item_id, note, cancel=False)


@work_cmd.command("cancel")
@click.argument("agent")
@click.argument("work_item_id")
@click.option("--note", help="Why, in a few words: it becomes the item's report.")
def cancel_cmd(agent: str, work_item_id: str, note: str | None) -> None:
    """Abandon a work item: the agent stops working on it, and it leaves the listing."""
    _end(agent, work_item_id, note, cancel=True)


def _end(agent: str, work_item_id: str, note: str | None, cancel: bool) -> None:
    from holon.cli.inputs import checked_text
    from holon.home.registry import resolve
    from holon.ops import work as workcontrol

    if note is not None:
        checked_text(note, "--note")
    item = workcontrol.close(resolve(agent), work_item_id, note, cancel)
    click.echo(f"{item['id']}: {item.get('completion_report') or item.get('readiness')}")

"""`holon trigger show|rotate|revoke AGENT` and `holon trigger deliver TOKEN`."""

from __future__ import annotations

import sys

import click

from holon.cli.output import emit_json


@click.group("trigger")
def trigger_cmd() -> None:
    """External trigger capability: a secret token whose delivery wakes the agent (wake_hint)."""


@trigger_cmd.command("show")
@click.argument("agent")
def show_cmd(agent: str) -> None:
    """Show AGENT's trigger descriptor (never the token)."""
    from holon.agent import triggers
    from holon.home.registry import resolve

    home = resolve(agent)
    data = triggers.show(home)
    if data is None:
        click.echo(
            f"{home.agent_id} has no external trigger; create one with "
            f"`holon trigger rotate {home.agent_id}`"
        )
        return
    emit_json(data)


@trigger_cmd.command("rotate")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True)
def rotate_cmd(agent: str, as_json: bool) -> None:
    """Mint a new token for AGENT (the old one stops working) and print it once."""
    from holon.agent import triggers
    from holon.home.registry import resolve

    data, token = triggers.rotate(resolve(agent))
    if as_json:
        emit_json({**data, "token": token})
        return
    click.echo(token)
    click.echo(
        "deliver with: holon trigger deliver TOKEN  (shown once; store it as a secret)", err=True
    )


@trigger_cmd.command("revoke")
@click.argument("agent")
def revoke_cmd(agent: str) -> None:
    """Revoke AGENT's trigger: future deliveries are refused."""
    from holon.agent import triggers
    from holon.home.registry import resolve

    data = triggers.revoke(resolve(agent))
    click.echo(f"revoked {data['external_trigger_id']}")


@trigger_cmd.command("deliver")
@click.argument("token")
@click.option("--source", help="Where the delivery comes from (provenance label).")
@click.option("--content-type", help="Content type of the body on stdin.")
@click.option("--json", "as_json", is_flag=True)
def deliver_cmd(token: str, source: str | None, content_type: str | None, as_json: bool) -> None:
    """Validate TOKEN and submit a wake hint to its agent; an optional body is read from stdin.

    Exit 2: unknown or revoked token; 3: the agent is stopped.
    """
    from holon.agent import triggers

    body = None
    if not sys.stdin.isatty():
        raw = sys.stdin.buffer.read(triggers.MAX_BODY_BYTES + 1)
        body = raw.decode("utf-8", errors="replace") or None
    result = triggers.deliver(token, body=body, source=source, content_type=content_type)
    if as_json:
        emit_json(result)
    else:
        click.echo(
            f"delivered to {result['agent_id']} (wake hint, {result['pending_deliveries']} pending)"
        )

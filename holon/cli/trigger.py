"""`holon trigger show|rotate|revoke AGENT` and `holon trigger deliver [TOKEN|-]` (the token
from argv, the first line of stdin, or HOLON_TRIGGER_TOKEN)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from holon.cli.output import emit_json
from holon.errors import UsageError

TOKEN_ENV = "HOLON_TRIGGER_TOKEN"
MAX_TOKEN_BYTES = 4096


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
        "deliver with: HOLON_TRIGGER_TOKEN=TOKEN holon trigger deliver  "
        "(shown once; store it as a secret)",
        err=True,
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
@click.argument("token", required=False, metavar="[TOKEN|-]")
@click.option("--source", help="Where the delivery comes from (provenance label, one line).")
@click.option("--content-type", help="Content type of the body on stdin.")
@click.option("--json", "as_json", is_flag=True)
def deliver_cmd(
    token: str | None, source: str | None, content_type: str | None, as_json: bool
) -> None:
    """Validate the token and submit a wake hint to its agent; an optional body is read from
    stdin.

    The token comes from the environment variable HOLON_TRIGGER_TOKEN when TOKEN is omitted, or
    from the first line of stdin with `-` (the rest of stdin is then the body). Prefer either:
    a TOKEN on the command line is visible to every user of the machine in `ps` and may be kept
    in shell history.

    Exit 2: unknown or revoked token, or none given; 3: the agent is stopped.
    """
    from holon.agent import triggers

    stdin = None if sys.stdin.isatty() else sys.stdin.buffer
    if token == "-":
        token = _token_line(stdin)
    elif token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if not token or not token.strip():
        raise UsageError(
            "no trigger token given",
            kind="missing_token",
            hint=f"set {TOKEN_ENV}, or pass `-` and send the token as the first line of stdin",
        )
    body = None
    if stdin is not None:
        raw = stdin.read(triggers.MAX_BODY_BYTES + 1)
        body = raw.decode("utf-8", errors="replace") or None
    result = triggers.deliver(token, body=body, source=source, content_type=content_type)
    if as_json:
        emit_json(result)
    else:
        click.echo(
            f"delivered to {result['agent_id']} (wake hint, {result['pending_deliveries']} pending)"
        )


def _token_line(stdin: Any) -> str:
    """The first line of stdin, at most MAX_TOKEN_BYTES (a token is ~50 bytes)."""
    if stdin is None:
        raise UsageError(
            "`-` reads the token from stdin, but stdin is a terminal",
            kind="missing_token",
            hint=f'pipe it in (`echo "$TOKEN" | holon trigger deliver -`), or set {TOKEN_ENV}',
        )
    line = stdin.readline(MAX_TOKEN_BYTES)
    return line.decode("utf-8", errors="replace").strip()

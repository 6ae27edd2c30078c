"""`holon enqueue`: admit a channel, webhook, timer or system message from a script."""

from __future__ import annotations

import click

from holon.cli.inputs import checked_label, parse_json_arg, read_text_arg
from holon.cli.output import emit_json


@click.command("enqueue")
@click.argument("agent")
@click.option(
    "--kind",
    required=True,
    type=click.Choice(["channel_event", "webhook_event", "timer_tick", "system_tick"]),
    help="Message kind; trust and authority follow from it and cannot be passed.",
)
@click.option("--source", help="Channel id, webhook source, timer id or subsystem name.")
@click.option("--text", help="Text body (`-` for stdin).")
@click.option(
    "--json-body",
    "json_body",
    help="JSON body: a literal, @path (a regular file), or - for stdin; strict JSON (no NaN), "
    "nested at most 64 deep.",
)
@click.option(
    "--priority",
    type=click.Choice(["interject", "next", "normal", "background"]),
    default="normal",
    show_default=True,
)
@click.option("--event-type", help="Webhook event type.")
@click.option("--sender", help="Channel sender id.")
@click.option("--json", "as_json", is_flag=True, help="Print the admitted envelope.")
def enqueue_cmd(
    agent: str,
    kind: str,
    source: str | None,
    text: str | None,
    json_body: str | None,
    priority: str,
    event_type: str | None,
    sender: str | None,
    as_json: bool,
) -> None:
    """Admit one message for AGENT. Provenance (origin, trust, authority class, delivery surface,
    admission context) is derived from --kind; a caller can never set it."""
    from holon.agent import admission
    from holon.errors import UsageError
    from holon.home.registry import resolve

    if (text is None) == (json_body is None):
        raise UsageError(
            "give exactly one of --text or --json-body",
            kind="invalid_body",
            hint="--text 'hello' or --json-body '{\"k\": 1}'",
        )
    body = (
        {"type": "text", "text": read_text_arg(text)}
        if text is not None
        else {"type": "json", "value": parse_json_arg(json_body or "", "--json-body")}
    )
    home = resolve(agent)
    env = admission.admit(
        home,
        "enqueue",
        kind,
        body,
        source=checked_label(source, "--source"),
        priority=priority,
        event_type=checked_label(event_type, "--event-type"),
        sender_id=checked_label(sender, "--sender"),
    )
    if as_json:
        emit_json(env)
    else:
        click.echo(env["id"])

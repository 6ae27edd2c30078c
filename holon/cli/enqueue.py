"""`holon enqueue`: admit a channel, webhook, timer or system message from a script. A plain
command line never reaches this module (holon.cli.fastpath runs it without click); help and
usage errors do."""

from __future__ import annotations

import click

from holon.cli import fastpath
from holon.vocab import DEFAULT_PRIORITY, ENQUEUE_KINDS, PRIORITIES


@click.command("enqueue")
@click.argument("agent")
@click.option(
    "--kind",
    type=click.Choice(ENQUEUE_KINDS),
    help="Message kind; trust and authority follow from it and cannot be passed. Required, "
    "except with --jsonl, where it is the kind of the lines that give none.",
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
    type=click.Choice(PRIORITIES),
    default=DEFAULT_PRIORITY,
    show_default=True,
)
@click.option("--event-type", help="Webhook event type.")
@click.option("--sender", help="Channel sender id.")
@click.option(
    "--jsonl",
    metavar="FILE",
    help="Admit one message per line of FILE (`-` for stdin): a JSON object with kind, text or "
    "json, and optionally source, priority, event_type, sender (the other options are the "
    "defaults). Prints one result line per input line; a bad line is refused with its line "
    "number and the rest are admitted.",
)
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
    jsonl: str | None,
    as_json: bool,
) -> None:
    """Admit one message for AGENT. Provenance (origin, trust, authority class, delivery surface,
    admission context) is derived from --kind; a caller can never set it.

    With --jsonl, admit many in one process, each as durably as one enqueue:

    \b
      printf '%s\\n' '{"kind": "channel_event", "text": "hi"}' | holon enqueue AGENT --jsonl -
    """
    if jsonl is not None:
        defaults = {"kind": kind, "source": source, "text": text, "json_body": json_body}
        defaults |= {"priority": priority, "event_type": event_type, "sender": sender}
        click.get_current_context().exit(fastpath.enqueue_lines(agent, jsonl, defaults))
    if kind is None:
        raise click.MissingParameter(param_type="option", param_hint="'--kind'")
    env = fastpath.enqueue(
        agent,
        kind,
        source=source,
        text=text,
        json_body=json_body,
        priority=priority,
        event_type=event_type,
        sender=sender,
    )
    fastpath.show(env, as_json)

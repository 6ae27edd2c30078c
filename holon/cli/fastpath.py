"""`holon enqueue` without click: the admission path scripts, webhooks and cron run many times a
second, each a new process, where importing click alone would be half the cost.

`parse` takes only the plain form: `enqueue AGENT` and the command's own options, each once,
as `--opt VALUE` or `--opt=VALUE`, with valid choices. Anything else (help, a typo, a repeated
or unknown option, `--`, a value that looks like an option, argv that is not UTF-8) is left to
click, which gives the usage error. Both paths share what the command does (`enqueue`) and
what it prints (`show`), so their output is the same.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from holon.vocab import DEFAULT_PRIORITY, ENQUEUE_KINDS, PRIORITIES

# the enqueue command's options (holon.cli.enqueue; tests/cli/test_cmd_enqueue_fastpath.py derives
# this table from its click parameters)
_VALUED = {
    "--kind": "kind",
    "--source": "source",
    "--text": "text",
    "--json-body": "json_body",
    "--priority": "priority",
    "--event-type": "event_type",
    "--sender": "sender",
}


def parse(args: list[str]) -> dict[str, Any] | None:
    """The options of a plain `holon enqueue` command line; None for anything else."""
    if len(args) < 2 or args[0] != "enqueue":
        return None
    out: dict[str, Any] = {"priority": DEFAULT_PRIORITY, "as_json": False}
    agent, seen, rest = None, set(), iter(args[1:])
    for arg in rest:
        if not _utf8(arg):
            return None
        name, eq, value = arg.partition("=")
        if arg == "--json":
            name = "--json"
        elif name in _VALUED:
            if not eq:
                value = next(rest, None)  # type: ignore[assignment]
                if value is None:
                    return None
            if not _utf8(value) or (value.startswith("-") and value != "-"):
                return None
        elif arg.startswith("-") or agent is not None:
            return None
        else:
            agent = arg
            continue
        if name in seen:
            return None
        seen.add(name)
        if name == "--json":
            out["as_json"] = True
        else:
            out[_VALUED[name]] = value
    if agent is None or out.get("kind") not in ENQUEUE_KINDS or out["priority"] not in PRIORITIES:
        return None
    return {"agent": agent, **out}


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def enqueue(
    agent: str,
    kind: str,
    *,
    source: str | None = None,
    text: str | None = None,
    json_body: str | None = None,
    priority: str = DEFAULT_PRIORITY,
    event_type: str | None = None,
    sender: str | None = None,
) -> dict[str, Any]:
    """Admit one message for `agent` from the command line's values; returns the envelope."""
    from holon.agent import admission
    from holon.cli.inputs import checked_label, parse_json_arg, read_text_arg
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
    return admission.admit(
        home,
        "enqueue",
        kind,
        body,
        source=checked_label(source, "--source"),
        priority=priority,
        event_type=checked_label(event_type, "--event-type"),
        sender_id=checked_label(sender, "--sender"),
    )


def show(envelope: dict[str, Any], as_json: bool) -> None:
    """What `holon enqueue` prints: the message id, or the envelope as one JSON document."""
    text = (
        json.dumps(envelope, ensure_ascii=False, indent=2, default=str)
        if as_json
        else envelope["id"]
    )
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run(options: dict[str, Any]) -> int:
    """Run a parsed plain enqueue."""
    as_json = options.pop("as_json")
    agent, kind = options.pop("agent"), options.pop("kind")
    show(enqueue(agent, kind, **options), as_json)
    return 0

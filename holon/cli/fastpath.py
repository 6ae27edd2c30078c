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

from holon.text import encodes_utf8
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
    "--jsonl": "jsonl",
}


def parse(args: list[str]) -> dict[str, Any] | None:
    """The options of a plain `holon enqueue` command line; None for anything else."""
    if len(args) < 2 or args[0] != "enqueue":
        return None
    out: dict[str, Any] = {"priority": DEFAULT_PRIORITY, "as_json": False}
    agent, seen, rest = None, set(), iter(args[1:])
    for arg in rest:
        if not encodes_utf8(arg):
            return None
        name, eq, value = arg.partition("=")
        if arg == "--json":
            name = "--json"
        elif name in _VALUED:
            if not eq:
                value = next(rest, None)  # type: ignore[assignment]
                if value is None:
                    return None
            if not encodes_utf8(value) or (value.startswith("-") and value != "-"):
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
    if options.get("jsonl") is not None:
        return enqueue_lines(agent, options.pop("jsonl"), {"kind": kind, **options})
    show(enqueue(agent, kind, **options), as_json)
    return 0


# what a line of `holon enqueue AGENT --jsonl -` may hold; the command line's options are defaults
LINE_FIELDS = ("kind", "text", "json", "source", "priority", "event_type", "sender")


def enqueue_lines(agent: str, source: str, defaults: dict[str, Any]) -> int:
    """Admit one message per JSON line of `source` (`-` for stdin, or a file), each durably and
    sealed as a single enqueue is, printing one result line per input line: `{"line": N, "id":
    ...}` or `{"line": N, "error": {...}}`. A bad line is refused with its number and the rest
    are still admitted; the exit code is 0, or the highest of the refusals' codes."""
    from holon.cli import failures
    from holon.errors import HolonError, UsageError
    from holon.home.registry import resolve

    unknown = [k for k, v in defaults.items() if v is not None and k not in LINE_FIELDS]
    if unknown or defaults.get("text") is not None or defaults.get("json_body") is not None:
        raise UsageError(
            "--jsonl takes each message's body from its line, not from --text or --json-body",
            kind="invalid_body",
            hint='one JSON object a line: {"kind": "channel_event", "text": "hello"}',
        )
    home = resolve(agent)  # once, for every line
    code = 0
    for number, raw in enumerate(_lines(source), start=1):
        if not raw.strip():
            continue
        try:
            envelope = _admit_line(home, raw, defaults)
        except HolonError as exc:
            failures.error(exc.kind, f"line {number}: {exc.message}", exc.hint)
            error = {"kind": exc.kind, "message": exc.message, "hint": exc.hint}
            _result({"line": number, "error": error})
            code = max(code, exc.exit_code)
            continue
        _result({"line": number, "id": envelope["id"]})
    return code


def _lines(source: str):
    if source == "-":
        yield from sys.stdin.buffer
        return
    from holon.cli.inputs import read_file

    yield from read_file(source, "--jsonl").splitlines()


def _admit_line(home, raw: bytes, defaults: dict[str, Any]) -> dict[str, Any]:
    """Admit the message one line describes."""
    from holon import strictjson
    from holon.agent import admission
    from holon.cli.inputs import checked_label, checked_text
    from holon.errors import InvalidInput

    try:
        line = strictjson.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, strictjson.InvalidJson) as exc:
        raise InvalidInput(
            f"not a JSON line: {exc}", kind="invalid_json", hint=_LINE_HINT
        ) from None
    if not isinstance(line, dict) or set(line) - set(LINE_FIELDS):
        extra = sorted(set(line) - set(LINE_FIELDS)) if isinstance(line, dict) else []
        raise InvalidInput(
            f"a line is one JSON object with the fields {', '.join(LINE_FIELDS)}"
            + (f"; unknown: {', '.join(extra)}" if extra else ""),
            hint=_LINE_HINT,
        )
    fields = {k: v for k, v in defaults.items() if v is not None} | line
    if ("text" in fields) == ("json" in fields) or not isinstance(fields.get("text", ""), str):
        raise InvalidInput(
            "give exactly one of text (a string) or json", kind="invalid_body", hint=_LINE_HINT
        )
    body = (
        {"type": "text", "text": checked_text(fields["text"], "text")}
        if "text" in fields
        else {"type": "json", "value": fields["json"]}
    )
    for key in ("kind", "source", "priority", "event_type", "sender"):
        if fields.get(key) is not None and not isinstance(fields[key], str):
            raise InvalidInput(f"{key} must be a string", hint=_LINE_HINT)
    if (
        fields.get("kind") not in ENQUEUE_KINDS
        or fields.get("priority", DEFAULT_PRIORITY) not in PRIORITIES
    ):
        raise InvalidInput(
            f"kind must be one of {', '.join(ENQUEUE_KINDS)} and priority one of "
            f"{', '.join(PRIORITIES)}",
            kind="invalid_message_kind",
            hint="give kind on the line, or --kind for every line",
        )
    return admission.admit(
        home,
        "enqueue",
        fields["kind"],
        body,
        source=checked_label(fields.get("source"), "source"),
        priority=fields.get("priority", DEFAULT_PRIORITY),
        event_type=checked_label(fields.get("event_type"), "event_type"),
        sender_id=checked_label(fields.get("sender"), "sender"),
    )


_LINE_HINT = 'one JSON object a line, e.g. {"kind": "channel_event", "text": "hello"}'


def _result(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()

"""Generate man pages from the click tree: `python -m holon.cli.manpage [DIR]` (default: man/).

One page per top-level command (a group's page covers its subcommands) plus
holon.1. Hand-written pages (holon-home.5) are left alone. A test fails when
the committed pages drift from the code.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from holon import __version__

EXIT_STATUS = (
    ".SH EXIT STATUS\n0 success; 1 the operation ran and failed (a failed turn, a tool error); "
    "2 usage or bad input; 3 the agent is not runnable (stopped or paused).\n"
    "Errors are printed on stderr as one line\n.B holon: <kind>: <message>\nfollowed by a\n"
    ".B hint:\nline.\n"
)

EXTRA = {
    "holon": (
        ".SH ENVIRONMENT\n.TP\n.B HOLON_HOME\nWhere config.toml, registry.json and agents/ live "
        "(default: the platform user data directory).\n.TP\n.B HOLON_MODEL\nModel ref "
        "provider/model (openai/..., anthropic/..., openai-codex/..., NAME/... for a "
        "[providers.NAME] table, scripted/PATH).\n.TP\n.B HOLON_FALLBACK_MODELS\nComma-separated "
        "fallback chain.\n.TP\n.B HOLON_RETRY_BACKOFF_MS\nBase retry backoff.\n.TP\n.B "
        "HOLON_DELIVERY_LIMIT\nDelivery attempts before a message is dead-lettered (default "
        "3).\n.TP\n.B HOLON_RETRY_BASE_S, HOLON_RETRY_MAX_S\nBackoff before a message whose turn "
        "failed for a provider outage runs again (default 30 s, doubling, at most 3600 s; a "
        "longer retry-after wins).\n.TP\n.B HOLON_MAX_PROVIDER_RETRIES\nSuch deferrals before "
        "the message is dead-lettered (default 8).\n.TP\n.B HOLON_MAX_ROUNDS\nProvider rounds per "
        "turn (default 50).\n.TP\n.B HOLON_MAX_SELF_DRIVEN_TURNS\nTurns in a row an agent "
        "may drive itself (its work queue, its own Enqueue) before the next is set aside with a "
        "brief (default 10; 0 for no cap).\n.TP\n.B HOLON_DEFAULT_DAILY_TOKENS\nThe daily token "
        "budget a new agent starts with (default 2000000; 0 for none). A spent daily budget holds "
        "the queue until it renews or is raised.\n.TP\n.B "
        "HOLON_TOOL_PLUGINS\nComma-separated module:Class tools to add to the catalog.\n.TP\n.B "
        "HOLON_NOW\nPin the clock (ISO-8601 or epoch seconds), for tests and replays.\n.TP\n.B "
        "HOLON_DEBUG\nSet to 1 to print tracebacks of internal errors.\n.SH FILES\n.TP\n.B "
        "$HOLON_HOME/keys.json\nProvider keys stored with holon keys set (mode 0600); an "
        "environment variable of the same name wins.\n.TP\n.B $HOLON_HOME/logs/tick.log\nWhat "
        "holon tick \\-\\-log did (rotated at 1 MiB).\n.SH SCRIPTED "
        "PROVIDER\nscripted/PATH replays a JSONL file, one assistant round per line: "
        '{"text": ..., "tool_calls": [{"name": ..., "arguments": {...}}], "usage": '
        '{"input_tokens": N, "output_tokens": N}, "stop_reason": ...} or a simulated failure '
        '{"error": {"status": 429, "kind": "rate_limited"}}. The cursor is kept per agent in '
        ".holon/scripted_cursor.json; an exhausted script fails the turn.\n"
    ),
    "feed": (
        ".SH RECORDS\nEach line is one operator record derived from one audit event: agent_id, "
        "event_id, event_seq, at, visibility (action_required, work_done, turn_result, progress, "
        "trace), category, title, body (a brief's full text), summary (one line), "
        "source_event_kind and provenance (message, task, work item, turn, correlation and "
        "causation ids where known). event_seq is the replay cursor of \\-\\-since-seq.\n"
        '.SH NOTIFY HOOK\nA [notify] table in $HOLON_HOME/config.toml runs command = ["prog", '
        '"arg", ...] (no shell) for each new record at levels = [...] (default '
        '["action_required"]), with the record as one JSON object on stdin, detached from the '
        "turn, stopped after timeout_s (default 10), outside the sandbox with its scrubbed "
        "environment. A record runs it at least once (cursor .holon/notify.json); a failure is a "
        "notify_hook_failed event that holon doctor reports.\n"
    ),
    "mcp": (
        ".SH CONFIGURATION\nOne table per server in $HOLON_HOME/config.toml; NAME is "
        "[a\\-z0\\-9_\\-]+.\n"
        ".TP\n.B command, args, env, cwd\nA stdio server: the program, its arguments, variables "
        "added to the sandbox's scrubbed environment, and its working directory (default: the "
        "agent's working directory).\n.TP\n.B url, bearer_token_env, headers\nA streamable HTTP "
        "server, reached by holon itself; the token is the key named bearer_token_env (the "
        "environment, else holon keys).\n.TP\n.B enabled\nDefault true; an agent's "
        ".holon/mcp.json may turn it on or off for that agent.\n.TP\n.B enabled_tools, "
        "disabled_tools\nWhich of its tools the model sees.\n.TP\n.B startup_timeout_s, "
        "tool_timeout_s\nDefault 10 and 60.\n"
        ".SH TOOLS\nThe model sees mcp__<server>__<tool> (other characters mapped to _, at most 64 "
        "characters; two tools with one name refuse the server's listing). A stdio server starts "
        "inside the agent's sandbox when a tick first needs it and stops when the tick ends. Its "
        "tool list is cached in the agent's .holon/indexes/mcp/<server>.json under a digest of "
        "its configuration and the version it reports, so a tick whose model calls no MCP tool "
        "starts no server. Failures are the tool errors mcp_server_unavailable, tool_timeout, "
        "invalid_mcp_response and mcp_tool_error (the server's isError); the turn goes on.\n"
        ".SH FILES\n.TP\n.B .holon/mcp.json\n"
        '{"enabled": [...], "disabled": [...], "grant_children": [...]}: this agent\'s choice, '
        "in the agent home, and the servers its private children may use (none otherwise).\n"
    ),
    "enqueue": (
        ".SH PROVENANCE\nchannel_event: origin channel, untrusted_external, external_evidence, "
        "surface http_public_enqueue. webhook_event: origin webhook, trusted_integration, "
        "integration_signal, surface http_webhook. timer_tick: origin timer, trusted_system, "
        "runtime_instruction, surface timer_scheduler. system_tick: origin system, trusted_system, "
        "runtime_instruction, surface runtime_system. Admission context is local_process.\n"
    ),
}


def _esc(text: str) -> str:
    return (
        text.replace("\\", "\\\\").replace("-", "\\-").replace("\n.", "\n\\&.").replace("'", "\\'")
    )


def _options(cmd: click.Command, ctx: click.Context) -> str:
    out = []
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        if not help_text:
            continue
        out.append(f".TP\n.B {_esc(names)}\n{_esc(help_text)}\n")
    return "".join(out)


def _section(cmd: click.Command, path: list[str], parent: click.Context) -> str:
    ctx = click.Context(cmd, info_name=path[-1], parent=parent)
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    text = f".SS {_esc(' '.join(path))}\n" if len(path) > 2 else ""
    paragraphs = inspect.cleandoc(cmd.help or "").split("\n\n")
    text += (
        f".B {_esc(' '.join(path))}\n{_esc(usage)}\n.PP\n"
        + "\n.PP\n".join(_esc(p.replace("\n", " ")) for p in paragraphs)
        + "\n"
    )
    return text + _options(cmd, ctx)


def _console_keys() -> str:
    """holon-console(1)'s keys and slash commands, from the console's own table."""
    from holon.console.commands import KEYS, SLASH

    keys = "\n.br\n".join(_esc(line) for line in KEYS.splitlines())
    rows = "".join(f".TP\n.B {_esc(cmd)}\n{_esc(what)}\n" for cmd, what in SLASH.items())
    return f".SH KEYS AND COMMANDS\n{keys}\n{rows}"


def page(name: str, cmd: click.Command, root: click.Context) -> str:
    title = "holon" if name == "holon" else f"holon-{name}"
    short = (cmd.get_short_help_str(limit=200) or "").rstrip(".")
    head = (
        f'.TH {title.upper()} 1 "" "holon {__version__}" "holon manual"\n.SH NAME\n{_esc(title)} '
        f"\\- {_esc(short)}\n"
    )
    path = ["holon"] if name == "holon" else ["holon", name]
    body = ".SH SYNOPSIS\n" + _section(cmd, path, root)
    if isinstance(cmd, click.Group) and name != "holon":
        ctx = click.Context(cmd, info_name=name, parent=root)
        body += ".SH COMMANDS\n"
        for sub in cmd.list_commands(ctx):
            body += _section(cmd.get_command(ctx, sub), [*path, sub], ctx)
    if name == "holon":
        body += ".SH COMMANDS\n" + "".join(
            f".TP\n.B holon {c}\nSee holon\\-{c}(1).\n" for c in cmd.list_commands(root)
        )
    body += EXTRA.get(name, "") + (_console_keys() if name == "console" else "") + EXIT_STATUS
    body += (
        ".SH SEE ALSO\n"
        + ("holon\\-home(5)" if name == "holon" else "holon(1), holon\\-home(5)")
        + "\n"
    )
    return head + body


def generate() -> dict[str, str]:
    from holon.cli.main import cli

    root = click.Context(cli, info_name="holon", help_option_names=["-h", "--help"])
    pages = {"holon.1": page("holon", cli, root)}
    for name in cli.list_commands(root):
        pages[f"holon-{name}.1"] = page(name, cli.get_command(root, name), root)
    return pages


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("man")
    out.mkdir(parents=True, exist_ok=True)
    for fname, text in generate().items():
        (out / fname).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""`holon status`, `holon transcript`, `holon events`, `holon briefs`: read the ledgers."""

from __future__ import annotations

import json

import click

from holon.cli.output import emit_json, emit_jsonl


@click.command("status")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="Everything shown, as one JSON document.")
def status_cmd(agent: str, as_json: bool) -> None:
    """Show AGENT's status, closure, queue, tasks, model and token usage."""
    from holon.home.registry import resolve
    from holon.ops.status import agent_summary

    home = resolve(agent)
    summary = agent_summary(home)
    if as_json:
        emit_json(summary)
        return
    tu = summary["token_usage"]["total"]
    lines = [
        f"agent:    {summary['agent_id']} ({summary['home']})",
        _status_line(summary, home),
        f"queue:    {summary['queue']['pending']} pending, {summary['queue']['in_progress']} in "
        f"progress, {summary['queue']['dead_letters']} dead letters"
        + (
            f", {q['deferred']} deferred until {q['next_not_before']} (provider outage)"
            if (q := summary["queue"]).get("deferred")
            else ""
        ),
        f"tasks:    {summary['tasks']['active']} active",
        _sandbox_line(summary["sandbox"]),
        f"model:    {summary['model']['effective_model'] or '(none)'} "
        f"({summary['model']['source']})",
        f"tokens:   {tu['input_tokens']} in, {tu['output_tokens']} out, "
        f"{summary['token_usage']['total_model_rounds']} rounds",
    ]
    lines.append(_context_line(summary["context"]))
    lines.append(_budget_line(summary["budget"]))
    if summary.get("lifecycle_hint"):
        lines.append(f"hint:     {summary['lifecycle_hint']}")
    click.echo("\n".join(lines))


def _budget_line(b: dict) -> str:
    driven = b["self_driven_turns"]
    cap = f"{driven['consecutive']} of {driven['cap'] or 'unlimited'} self-driven turns in a row"
    if "error" in b:
        return f"budget:   unreadable: {b['error']['message']} · {cap}"
    limits = b["limits"]
    daily = limits.get("daily_tokens")
    line = f"budget:   {b['used_today']} of {daily or 'unlimited'} tokens today"
    if limits.get("turn_tokens"):
        line += f" · {limits['turn_tokens']} per turn"
    line += f" · {cap}"
    if b["hold"]:
        line += f"\nheld:     {b['hold']['message']}"
    return line


def _status_line(summary: dict, home) -> str:
    """The status, until when it sleeps and on what it waits, and why the last closure failed
    (the failure brief's first line)."""
    line = f"status:   {summary['status']}"
    if summary.get("sleeping_until"):
        line += f" until {summary['sleeping_until']}"
    closure = summary.get("closure") or {}
    if closure:
        line += f" · closure {closure.get('outcome')}"
        if closure.get("waiting_reason"):
            line += f" (waiting: {closure['waiting_reason']})"
        if closure.get("outcome") == "failed":
            line += f": {_failure_reason(home, closure.get('message_id'))}"
    return line


def _failure_reason(home, message_id: str | None) -> str:
    from holon.store import jsonl

    for brief in reversed(jsonl.tail(home.briefs, 20)):
        if brief.get("kind") == "failure" and brief.get("message_id") in (None, message_id):
            return (str(brief.get("text") or "").strip().splitlines() or ["(no text)"])[0]
    return "see `holon briefs` and `holon events`"


def _sandbox_line(sb: dict) -> str:
    if "error" in sb:
        return f"sandbox:  invalid: {sb['error']['message']} (commands are refused)"
    enforced = (
        f"enforced by {sb['enforcement']}"
        if sb["enforced"] and sb["enforcement"] != "none"
        else "not confined"
        if sb["enforced"]
        else "NOT ENFORCEABLE here: commands are refused"
    )
    return f"sandbox:  {sb['mode']}, network {sb['network']} ({enforced})"


def _context_line(ctx: dict) -> str:
    window = ctx.get("context_window")
    used = ctx.get("last_request_tokens")
    learned = ctx.get("learned_window")
    of_window = f"{window}-token window" + (
        f" (learned; {ctx['configured_window']} configured)" if learned else ""
    )
    use = (
        f"{used} tokens in the last request: {_share(ctx, 'use_of_budget')} of the "
        f"{ctx['prompt_budget']}-token compaction budget, {_share(ctx, 'use_of_window')} "
        f"of the {of_window}"
        if used and window
        else f"{of_window}, no request yet"
        if window
        else "no model"
    )
    last = ctx.get("last_compaction")
    compacted = (
        f"last compaction {last['at']} ({last['folded_turns']} turn(s) folded)"
        if last
        else "never compacted"
    )
    return f"context:  {use} · {ctx['episodes']} episode(s) · {compacted}"


def _share(ctx: dict, key: str) -> str:
    value = ctx.get(key)
    return "?" if value is None else f"{value:.0%}"


def _follow(path, offset: int, render) -> None:
    _follow_many([(path, offset, render)])


def _follow_many(ledgers: list[tuple]) -> None:
    """Print what is appended to each (path, offset, render) from its offset, until Ctrl-C or
    until the reader of stdout goes away (noticed while waiting, not only at the next write)."""
    from holon.cli import pipes
    from holon.store import jsonl

    offsets = [offset for _, offset, _ in ledgers]
    try:
        while True:
            printed = False
            for i, (path, _, render) in enumerate(ledgers):
                records, offsets[i] = jsonl.read_from(path, offsets[i])
                for r in records:
                    render(r)
                printed = printed or bool(records)
            if not printed:
                pipes.wait(0.2)
    except KeyboardInterrupt:
        return


def _size(path) -> int:
    from holon.store import jsonl

    return jsonl.end_offset(path)  # logical: a rotation does not move where --follow resumes


_PATCH_HEADS = ("*** ", "diff --git ", "--- ", "+++ ", "@@ ", "rename from ", "rename to ")
_RAW_SHOWN = 20


def _raw_summary(raw: str) -> list[str]:
    """What a call with raw (freeform) arguments is shown by: a patch's file and hunk headers,
    else its first lines; at most _RAW_SHOWN lines of at most 200 characters."""
    lines = raw.splitlines()
    shown = [line for line in lines if line.startswith(_PATCH_HEADS)] or lines
    out = [line[:200] + ("..." if len(line) > 200 else "") for line in shown[:_RAW_SHOWN]]
    more = len(shown) - _RAW_SHOWN
    return out + ([f"... ({more} more)"] if more > 0 else [])


def transcript_line(rec: dict) -> str:
    d = rec.get("data", {})
    kind = rec.get("kind")
    t = rec.get("created_at", "")
    if kind == "message":
        return f"{t} [{d.get('message_kind')} · {d.get('authority_class')}] {d.get('text', '')}"
    if kind == "assistant_round":
        calls = ", ".join(c["name"] for c in d.get("tool_calls", []))
        return f"{t} assistant: {d.get('text', '')}" + (f"  → {calls}" if calls else "")
    if kind == "tool_call":
        raw = d.get("raw_arguments")
        if d.get("arguments") is None and isinstance(raw, str):
            return f"{t} tool call {d.get('name')} (raw text, {len(raw.splitlines())} lines)" + (
                "".join(f"\n  {line}" for line in _raw_summary(raw))
            )
        return f"{t} tool call {d.get('name')} {json.dumps(d.get('arguments'), ensure_ascii=False)}"
    if kind == "tool_result":
        return f"{t} tool result {d.get('tool_name')} ({d.get('status')}):\n{d.get('rendered', '')}"
    if kind == "brief":
        b = d.get("brief", {})
        return f"{t} brief ({b.get('kind')}): {b.get('text', '')}"
    if kind == "runtime_failure":
        return f"{t} runtime failure: {d.get('summary')}"
    return f"{t} {kind}"


def _printer(jsonl_mode: bool, fmt, prepare=lambda r: r):
    if jsonl_mode:
        return lambda r: emit_jsonl([prepare(r)])
    return lambda r: click.echo(fmt(r))


@click.command("transcript")
@click.argument("agent")
@click.option("--jsonl", "as_jsonl", is_flag=True, help="One JSON record per line.")
@click.option(
    "--tail", type=click.IntRange(min=0), help="Only the last N entries (read from the end)."
)
@click.option("--follow", "-f", is_flag=True, help="Keep printing new entries (Ctrl-C to stop).")
def transcript_cmd(agent: str, as_jsonl: bool, tail: int | None, follow: bool) -> None:
    """Print AGENT's transcript: messages, assistant rounds, tool calls and results, briefs,
    failures."""
    from holon.home.registry import resolve
    from holon.store import jsonl, storedonce

    home = resolve(agent)
    path = home.transcript
    offset = _size(path)
    records = jsonl.tail(path, tail) if tail is not None else jsonl.read(path)
    show = _printer(as_jsonl, transcript_line, storedonce.expand_entry)
    for r in records:
        show(r)
    if follow:
        _follow(path, offset, show)


def event_line(rec: dict) -> str:
    from holon.feed.present import scalar_fields

    brief = scalar_fields(rec.get("data", {}))
    return f"{str(rec.get('event_seq')):>6} {rec.get('created_at')} {rec.get('kind')} {brief}"


@click.command("events")
@click.argument("agent")
@click.option("--jsonl", "as_jsonl", is_flag=True, help="One JSON record per line.")
@click.option(
    "--since-seq", type=click.IntRange(min=0), default=0, help="Only events with event_seq > N."
)
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events (Ctrl-C to stop).")
def events_cmd(agent: str, as_jsonl: bool, since_seq: int, follow: bool) -> None:
    """Print AGENT's audit events (each with a per-agent event_seq)."""
    from holon.agent.handle import event_seq
    from holon.home.registry import resolve
    from holon.store import jsonl

    home = resolve(agent)
    path = home.events
    offset = _size(path)
    show = _printer(as_jsonl, event_line)
    for r in jsonl.read(path):
        if (event_seq(r) or 0) > since_seq or not since_seq:
            show(r)
    if follow:
        _follow(path, offset, show)


@click.command("briefs")
@click.argument("agent", required=False)
@click.option(
    "--all", "all_agents", is_flag=True, help="Every agent's briefs, each line with its agent."
)
@click.option("--jsonl", "as_jsonl", is_flag=True, help="One JSON record per line.")
@click.option("--tail", type=click.IntRange(min=0), help="Only the last N briefs (of each agent).")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new briefs (Ctrl-C to stop).")
def briefs_cmd(
    agent: str | None, all_agents: bool, as_jsonl: bool, tail: int | None, follow: bool
) -> None:
    """Print AGENT's briefs (ack, result, failure), or with --all every agent's.

    With --follow, keeps printing new briefs as turns end, until Ctrl-C or until the reader of
    the output goes away (`holon briefs --all --follow | head -1`).
    """
    from holon.home.registry import all_homes, resolve
    from holon.store import jsonl

    if (agent is None) == (not all_agents):
        from holon.errors import UsageError

        raise UsageError(
            "give an AGENT or --all, not both", hint="holon briefs AGENT, or holon briefs --all"
        )
    homes = all_homes() if all_agents else [resolve(agent)]
    ledgers = []
    for home in homes:
        offset = _size(home.briefs)
        records = jsonl.tail(home.briefs, tail) if tail is not None else jsonl.read(home.briefs)
        show = _brief_printer(as_jsonl, home.agent_id if all_agents else None)
        for r in records:
            show(r)
        ledgers.append((home.briefs, offset, show))
    if follow:
        _follow_many(ledgers)


def _brief_printer(as_jsonl: bool, agent_id: str | None):
    if as_jsonl:
        return _printer(
            True, None, lambda b: b if agent_id is None else {"agent_id": agent_id, **b}
        )
    who = "" if agent_id is None else f"{agent_id} "
    return _printer(False, lambda b: f"{who}{b.get('created_at')} {b.get('kind')}: {b.get('text')}")

"""Episodes: immutable records of a stretch of settled turns, in `ledger/context_episodes.jsonl`.

After each settled turn its evidence is merged into the open episode builder (kept in
`state.working_memory`). The builder is finalized on a semantic boundary: the active work item
changes, a work item is delivered, the agent goes to sleep or waits on tasks, the builder hits its
size cap, or compaction folds its turns out of the conversation window. The summary is
deterministic; no model call is needed to write or to replay one.
"""

from __future__ import annotations

from typing import Any

from holon import clock
from holon.agent import workitems
from holon.context import turnlines
from holon.context.evidence import command_line, excerpt
from holon.home.layout import Home
from holon.ids import new_id
from holon.store import jsonl
from holon.vocab import SCHEMA_VERSION

MAX_TURNS = 12  # the hard size cap of one episode
MAX_FILES = 40
MAX_COMMANDS = 20
MAX_VERIFICATION = 10
MAX_DECISIONS = 10  # replies that give a reason or come with a change, newest kept
LINE_COMMANDS, LINE_CMD_CHARS = 3, 80  # commands a turn line names, each cut to this
OPEN_ITEMS, OPEN_TODOS = 10, 8  # open work items an episode carries forward, todos of each
SUMMARY_CHARS = 2_000
TAIL_SCAN = 64  # episodes the prompt considers (newest first): bounded however old the agent is


def open_builder(turn: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": new_id("ep"),
        "opened_at": clock.now_iso(),
        "work_item_id": turn.get("work_item_id"),
        "workspace_id": turn.get("workspace_id") or "agent_home",
        "first_turn_index": turn["turn_index"],
        "first_turn_id": turn["turn_id"],
        "first_message_id": turn.get("message_id"),
        "start_offset": turn["offset"],
        "turns": 0,
        "turn_ids": [],
        "lines": [],
        "files": [],
        "commands": [],
        "verification": [],
        "decisions": [],
    }


def turn_line(turn: dict[str, Any], ev: dict[str, Any]) -> str:
    index = turn.get("turn_index")
    parts = [f"turn {index}" if index is not None else "earlier turn"]
    parts.append(f"{ev.get('kind') or 'message'}: {ev['asked']}" if ev.get("asked") else "")
    if ev.get("commands"):
        parts.append("ran " + commands_text(ev["commands"]))
    if ev.get("files"):
        parts.append("changed " + ", ".join(ev["files"][:6]))
    if ev.get("replied"):
        parts.append(f"replied: {ev['replied']}")
    if turn.get("outcome") == "failed":
        parts.append("the turn failed")
    return " — ".join(p for p in parts if p)


def commands_text(commands: list[dict[str, Any]]) -> str:
    """The first commands of a turn by name with their exit status, and how many more."""
    shown = [
        command_line({**c, "cmd": excerpt(str(c.get("cmd")), LINE_CMD_CHARS - 20, 16)})
        for c in commands[:LINE_COMMANDS]
    ]
    more = len(commands) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def merge(builder: dict[str, Any], turn: dict[str, Any], ev: dict[str, Any]) -> None:
    """Fold one settled turn into the builder (idempotent: a turn merged twice counts once)."""
    if turn["turn_id"] in builder["turn_ids"]:
        return
    builder["turn_ids"].append(turn["turn_id"])
    builder["turns"] += 1
    builder["last_turn_index"] = turn["turn_index"]
    builder["last_turn_id"] = turn["turn_id"]
    builder["last_message_id"] = turn.get("message_id")
    builder["end_offset"] = turn["end"]
    builder["lines"].append(turn_line(turn, ev))
    builder["files"] = list(dict.fromkeys(builder["files"] + ev.get("files", [])))[-MAX_FILES:]
    builder["commands"] = (builder["commands"] + ev.get("commands", []))[-MAX_COMMANDS:]
    builder["verification"] = (builder["verification"] + ev.get("verification", []))[
        -MAX_VERIFICATION:
    ]
    if ev.get("decided"):
        index = turn.get("turn_index")
        decision = (
            f"{'turn ' + str(index) if index is not None else 'earlier turn'}: {ev['replied']}"
        )
        builder["decisions"] = (builder["decisions"] + [decision])[-MAX_DECISIONS:]


def summary(builder: dict[str, Any]) -> str:
    """A bounded account of the episode: its turns (routine repeats grouped, holon.context
    .turnlines; the first and last kept when long), then what it changed and verified."""
    lines = turnlines.group_lines(list(builder["lines"]))
    tail = []
    if builder["files"]:
        tail.append("files: " + ", ".join(builder["files"][-12:]))
    if builder["verification"]:
        tail.append("verified: " + "; ".join(command_line(c) for c in builder["verification"][-3:]))
    text = "\n".join(lines + tail)
    if len(text) <= SUMMARY_CHARS:
        return text
    tail = [
        t if len(t) <= SUMMARY_CHARS // 4 else excerpt(t, SUMMARY_CHARS // 4 - 4, 0) for t in tail
    ]
    budget = SUMMARY_CHARS - sum(len(t) + 1 for t in tail)
    per = budget // max(1, len(lines)) - 1  # each line and its newline
    if per >= 40:
        lines = [turnlines.squeeze(line, per) for line in lines]
    else:  # too many turns to show each: the first and the last, and a count between
        keep = max(1, budget // 160)
        head, last = lines[: keep - keep // 2], lines[len(lines) - keep // 2 :] if keep > 1 else []
        middle = [f"… {len(lines) - len(head) - len(last)} more turns …"]
        lines = [excerpt(line, 100, 50) for line in head + middle + last]
    return "\n".join(lines + tail)[:SUMMARY_CHARS]


def fit_summary(text: str, chars: int) -> str:
    """A summary cut to `chars`, every line shortened alike (each turn keeps its start and end)
    rather than the last lines lost."""
    if len(text) <= chars:
        return text
    lines = text.splitlines()
    per = chars // max(1, len(lines)) - 1
    if per >= 40:
        return "\n".join(turnlines.squeeze(line, per) for line in lines)
    out, used = [], 0
    for line in lines:
        line = excerpt(line, 60, 20)
        if used + len(line) + 1 > chars - 20:
            out.append(f"… {len(lines) - len(out)} more")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def finalize(
    builder: dict[str, Any],
    *,
    agent_id: str,
    reason: str,
    carry_forward: list[str],
    waiting: str | None,
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "id": builder["id"],
        "agent_id": agent_id,
        "created_at": clock.now_iso(),
        "reason": reason,
        "workspace_id": builder.get("workspace_id") or "agent_home",
        "work_item_id": builder.get("work_item_id"),
        "turns": {
            "first_index": builder["first_turn_index"],
            "last_index": builder.get("last_turn_index", builder["first_turn_index"]),
            "count": builder["turns"],
            "first_turn_id": builder["first_turn_id"],
            "last_turn_id": builder.get("last_turn_id", builder["first_turn_id"]),
        },
        "messages": {
            "first_id": builder.get("first_message_id"),
            "last_id": builder.get("last_message_id"),
            "count": builder["turns"],
        },
        "transcript": {
            "start_offset": builder["start_offset"],
            "end_offset": builder.get("end_offset", builder["start_offset"]),
        },
        "files": builder["files"],
        "commands": builder["commands"],
        "verification": builder["verification"],
        "decisions": builder["decisions"],
        "carry_forward": carry_forward,
        "waiting": waiting,
        "summary": summary(builder),
        "summary_source": "deterministic",
    }


def carry_forward(home: Home, current: dict[str, Any]) -> list[str]:
    """What an episode hands on: the active work, then every open work item, each with its open
    todos (bounded: OPEN_ITEMS items, OPEN_TODOS todos each)."""
    out: list[str] = []
    active = current.get("active_work")
    if active:
        out.append(f"continue {active['id']}: {active['objective']}")
    items = [r for r in workitems.load_all(home).values() if r.get("state") == "open"]
    items.sort(key=lambda r: r["id"] != (active or {}).get("id"))  # the active item first
    for rec in items[:OPEN_ITEMS]:
        if rec["id"] != (active or {}).get("id"):
            out.append(f"open: {rec['id']} {excerpt(str(rec.get('objective', '')), 100, 0)}")
        todos = [
            t
            for t in rec.get("todo_list") or []
            if isinstance(t, dict) and t.get("state") != "completed"
        ]
        out += [
            f"todo ({rec['id']}): {excerpt(str(t.get('text', '')), 100, 20)}"
            for t in todos[:OPEN_TODOS]
        ]
        if len(todos) > OPEN_TODOS:
            out.append(f"todo ({rec['id']}): … {len(todos) - OPEN_TODOS} more")
    if len(items) > OPEN_ITEMS:
        out.append(f"open: … {len(items) - OPEN_ITEMS} more work items")
    return out


def append(path: Any, record: dict[str, Any]) -> None:
    """Append an episode unless it is already the last one (a settle repeated after a crash)."""
    last = jsonl.last(path)
    if last is not None and last.get("id") == record["id"]:
        return
    jsonl.append(path, record)


def boundary(builder: dict[str, Any], *, delivered: bool, waiting: str | None) -> str | None:
    """Why the builder closes after its latest turn, or None to keep it open."""
    if delivered:
        return "result"
    if waiting:
        return "sleep" if waiting.startswith("asleep") else "wait"
    if builder["turns"] >= MAX_TURNS or len("\n".join(builder["lines"])) > 4 * SUMMARY_CHARS:
        return "size_cap"
    return None


def recent(path: Any, before: int) -> list[dict[str, Any]]:
    """Episodes that begin before transcript offset `before`: each covers at least one turn that
    was folded out of the window (it may also cover turns still in it). Oldest first, from a
    bounded tail of the ledger. The set changes only when the window start moves: every episode
    finalized later begins after the window start."""
    out = []
    for rec in jsonl.tail(path, TAIL_SCAN):
        start = (rec.get("transcript") or {}).get("start_offset")
        if isinstance(start, int) and start < before and rec.get("summary"):
            out.append(rec)
    return out


def heading(rec: dict[str, Any]) -> str:
    t = rec.get("turns") or {}
    first, last = t.get("first_index"), t.get("last_index")
    if first is None:  # turns from before episodes were kept have no index
        span = f"{t.get('count', '?')} earlier turn(s)"
    elif first == last:
        span = f"turn {first}"
    else:
        span = f"turns {first}–{last}"
    work = f" · work {rec['work_item_id']}" if rec.get("work_item_id") else ""
    by = ""
    if rec.get("summary_source") == "model":  # holon.context.summaries
        by = f" · summary written by {rec.get('summary_model_ref') or 'the model'}"
    return f"## Episode {rec['id']} · {span} · {rec.get('created_at', '')[:16]}{work}{by}"

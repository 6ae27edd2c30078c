"""The run state (`.holon/state.json`) read, checked against the ledgers, and rebuilt from them.

state.json is volatile: git ignores it, so a fresh clone has none, and a restored commit brings
older ledgers under a newer one. It is rebuilt — from defaults, settings.json and what the
tracked ledgers say — when it is missing, when it is not a valid AgentState (it is then set
aside as `state.json.corrupt-<time>`), and when it points past the end of the transcript (the
ledgers were rewound under it). What a rebuild recovers:

- the conversation window starts where the last compaction left it (its event), else after the
  newest finalized episode: the turns before it are shown as episodes;
- the turn counter continues after the newest episode;
- today's token usage is counted again from the turn_terminal events, so a daily budget holds;
- a turn that began and never ended, for a message still in the queue (claimed when a tick
  died, or deferred by a provider outage), is in flight again from its first message line, so
  its next delivery resumes it and tool calls it already made are not run again;
- everything else (working memory, closure, counters) starts afresh.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from holon import clock, jsonfile
from holon.home.layout import STATE_JSON_HINT, Home
from holon.model.records import AgentState
from holon.store import jsonl

EPISODE_SCAN = 64  # newest episodes read (holon.context.episodes reads as many)
EVENT_SCAN = (512, 4096, 32768)  # newest events read, widening until today and a window are found
HINT = STATE_JSON_HINT


class Unreadable(Exception):
    """state.json exists but is not a valid AgentState; the message says why."""


def read(home: Home) -> AgentState | None:
    """The run state as stored, None when there is none; raises Unreadable."""
    raw = None
    try:
        raw = jsonfile.read_bytes(home.state_json)
        data = None if raw is None else jsonfile.parse(raw)
    except jsonfile.Unreadable as exc:
        if raw is not None and jsonfile.conflicted(raw):
            raise Unreadable("is not valid JSON (it holds a merge conflict marker)") from None
        raise Unreadable(str(exc)) from None
    if raw is None:
        return None
    if not isinstance(data, dict):
        kind = jsonfile.kind_of(data)
        raise Unreadable(f"is not a valid run state (the top level: a JSON {kind}, not an object)")
    try:
        return AgentState.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "the top level"
        raise Unreadable(f"is not a valid run state ({where}: {err.get('msg')})") from None


def transcript_size(home: Home) -> int:
    """The transcript's logical size (its rotated segments included)."""
    return jsonl.end_offset(home.transcript)


def rewound(home: Home, state: AgentState) -> bool:
    """Does `state` point past the end of the transcript (an older ledger was restored)?"""
    ctx, builder = state.context, state.working_memory.active_episode_builder or {}
    offsets = [ctx.window_start, ctx.episodes_through]
    offsets += [_int(v.get("transcript_offset")) for v in state.inflight.values()]
    offsets += [_int(builder.get("start_offset")), _int(builder.get("end_offset"))]
    return max(offsets) > transcript_size(home)


def set_aside(home: Home) -> Path | None:
    """Rename an unreadable state.json out of the way; returns its new path."""
    stamp = clock.now_iso().replace(":", "").replace("-", "")
    target = home.state_json.with_name(f"state.json.corrupt-{stamp}")
    try:
        os.replace(home.state_json, target)
    except FileNotFoundError:
        return None
    return target


def rebuilt(home: Home, agent_id: str) -> AgentState:
    """A run state from defaults and the tracked ledgers (settings are applied by the caller)."""
    state = AgentState(id=agent_id)
    size = transcript_size(home)
    episodes = [
        e
        for e in jsonl.tail(home.context_episodes, EPISODE_SCAN)
        if 0 <= _int((e.get("transcript") or {}).get("end_offset"), -1) <= size
    ]
    through = max((_int(e["transcript"]["end_offset"]) for e in episodes), default=0)
    window, tokens = _from_events(home, size)
    state.context.episodes_through = through
    state.context.window_start = through if window is None else min(window, size)
    last = [_int((e.get("turns") or {}).get("last_index"), -1) for e in episodes]
    state.turn_index = max(last, default=-1) + 1
    state.working_memory.archived_episode_count = jsonl.scan(home.context_episodes)[0]
    if tokens:
        state.token_usage_by_day = {clock.now_iso()[:10]: tokens}
    state.inflight = unfinished_turns(home)
    return state


def unfinished_turns(home: Home) -> dict[str, dict[str, Any]]:
    """message id -> in-flight record, for the messages in the queue that may be mid-turn (those in
    cur/, and those in new/ put back with a not-before time) whose turn began in the transcript
    and has no turn_terminal. One pass over the transcript, only when there are such messages."""
    from holon.store.queue import not_before_of

    queue = home.queue
    names = [("cur", n) for n in queue.in_progress()]
    names += [("new", n) for n in queue.pending() if not_before_of(n) is not None]
    waiting = set()
    for where, name in names:
        record = queue.read_cur(name) if where == "cur" else queue.read_new(name)
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            waiting.add(record["id"])
    if not waiting:
        return {}
    began: dict[str, dict[str, Any]] = {}
    ended: set[str] = set()
    for here, line in jsonl.lines(home.transcript, 0):  # logical offsets, across segments
        if not (b'"message"' in line or b"turn_terminal" in line):
            continue
        entry = jsonl.parse_line(line)
        if entry is None:
            continue
        mid, tid = entry.get("message_id"), entry.get("turn_id")
        if entry.get("kind") == "message" and mid in waiting and mid not in began and tid:
            began[mid] = {
                "turn_id": tid,
                "transcript_offset": here,
                "started_at": entry.get("created_at"),
                "pid": None,
            }
        elif entry.get("kind") == "turn_terminal" and tid:
            ended.add(tid)
    return {m: rec for m, rec in began.items() if rec["turn_id"] not in ended}


def _from_events(home: Home, size: int) -> tuple[int | None, int]:
    """(the window start of the newest compaction or rebase within the transcript, today's tokens
    from turn_terminal events), reading the events ledger backwards in widening steps."""
    today = clock.now_iso()[:10]
    events: list[dict[str, Any]] = []
    for n in EVENT_SCAN:
        events = jsonl.tail(home.events, n)
        exhausted = len(events) < n
        window = _window(events, size)
        before_today = bool(events) and str(events[0].get("created_at", ""))[:10] < today
        if exhausted or (window is not None and before_today):
            break
    tokens = 0
    for e in events:
        if e.get("kind") == "turn_terminal" and str(e.get("created_at", ""))[:10] == today:
            usage = (e.get("data") or {}).get("token_usage") or {}
            tokens += _int(usage.get("total_tokens"))
    return _window(events, size), tokens


def _window(events: list[dict[str, Any]], size: int) -> int | None:
    for e in reversed(events):
        if e.get("kind") in ("context_compacted", "context_window_rebased"):
            start = _int((e.get("data") or {}).get("window_start"), -1)
            if 0 <= start <= size:
                return start
    return None


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default

"""Model-written episode summaries: opt-in, recorded once, replayed exactly.

With `model_summaries` on (settings.json, `holon model summaries AGENT on`), an episode finalized
at a turn's settle or by a compaction in its rounds is queued in `context.summaries_pending`;
after the turn's settle the agent's model writes a short summary of it from its deterministic
record (holon.runtime.turn.summaries), never inside the tool loop nor on an idle tick. The
episode record is immutable and already appended by then, so the summary is a companion line of
`ledger/context_summaries.jsonl`, linked by `episode_id`:

    {"kind": "attempt", "episode_id", "input_digest", "model_ref", "created_at"}   before a call
    {"kind": "summary", "id", "episode_id", "workspace_id", "turns", "summary",
     "summary_source": "model", "model_ref", "input_digest", "usage", "created_at"}  after it

An attempt is logged before each call, so a crash between the call and its record leads to one
more call at most (MAX_ATTEMPTS), and a summary is appended only when the episode has none: never
two. Reading is deterministic: the episode block shows the recorded text and nothing calls the
model again to replay a prompt. Without a summary line the deterministic summary stays in force.
"""

from __future__ import annotations

import hashlib
from typing import Any

from holon import clock, safetext
from holon.agent.handle import Agent
from holon.context import episodes
from holon.home.layout import Home
from holon.store import jsonl
from holon.vocab import SCHEMA_VERSION

MAX_ATTEMPTS = 2  # calls per episode: the first, and one more after a crash that lost its result
MAX_PENDING = 16  # episodes queued at most (the oldest give way: theirs stays deterministic)
MAX_CHARS = 1_200  # of a model summary
TAIL = 4 * episodes.TAIL_SCAN  # companion lines read: attempts and summaries of recent episodes
INSTRUCTIONS = (
    "You write the memory of a long-lived agent. Below is the deterministic record of one "
    "episode of its work (a stretch of turns). Write a short summary of it, at most 8 lines and "
    f"{MAX_CHARS} characters of plain text: what was asked, what was done and decided and why, "
    "the commands and files that matter, what was verified, and what is left open. Keep names, "
    "numbers and paths exact. Output only the summary."
)


def set_enabled(agent: Agent, on: bool) -> None:
    """Turn model-written summaries on or off for future episodes (off drops the queue)."""

    def apply(s: Any) -> None:
        s.model_summaries = on
        if not on:
            s.context.summaries_pending = []

    agent.update_state(apply)
    agent.event("model_summaries_set", enabled=on)


def queue(state: Any, records: list[dict[str, Any]]) -> None:
    """Queue the episodes a settle or a compaction finalizes for a model summary, when the agent
    wants them (each once)."""
    if state.model_summaries and records:
        pending = state.context.summaries_pending
        pending = pending + [r["id"] for r in records if r["id"] not in pending]
        state.context.summaries_pending = pending[-MAX_PENDING:]


def prompt_input(rec: dict[str, Any]) -> str:
    """The exact text the model is given for episode `rec` (its digest is recorded)."""
    t = rec.get("turns") or {}
    lines = [episodes.heading(rec).removeprefix("## "), f"closed because: {rec.get('reason')}"]
    lines += ["", "Turns:", str(rec.get("summary") or "")]
    for title, key in (("Decisions", "decisions"), ("Carried forward", "carry_forward")):
        items = [str(x) for x in rec.get(key) or []]
        lines += ["", f"{title}:"] + [f"- {x}" for x in items] if items else []
    if rec.get("waiting"):
        lines += ["", f"Waiting: {rec['waiting']}"]
    lines += ["", f"({t.get('count', '?')} turn(s))"]
    return "\n".join(lines)


def clean(text: str) -> str:
    """The model's answer as it is recorded: control characters escaped as text, no line that
    passes for a heading of the episode block (`## Episode …`), no blank lines, MAX_CHARS."""
    lines = [safetext.one_line(line, MAX_CHARS).strip() for line in text.splitlines()]
    lines = [line.lstrip("#").strip() if line.startswith("#") else line for line in lines]
    return "\n".join(line for line in lines if line)[:MAX_CHARS].strip()


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def lines_for(home: Home, episode_id: str) -> list[dict[str, Any]]:
    """The companion lines of one episode (attempts and summary), oldest first."""
    if not home.context_summaries.exists():
        return []
    recent = jsonl.tail(home.context_summaries, TAIL)
    return [r for r in recent if r.get("episode_id") == episode_id]


def recorded(home: Home) -> dict[str, dict[str, Any]]:
    """Episode id -> its model summary line, for the recent episodes (a bounded tail)."""
    if not home.context_summaries.exists():
        return {}
    out: dict[str, dict[str, Any]] = {}
    for r in jsonl.tail(home.context_summaries, TAIL):
        if r.get("kind") == "summary" and isinstance(r.get("summary"), str) and r["summary"]:
            out.setdefault(str(r.get("episode_id")), r)  # the first one recorded wins
    return out


def shown(rec: dict[str, Any], found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Episode `rec` as the prompt shows it: with its model summary when one is recorded."""
    line = found.get(str(rec.get("id")))
    if line is None or rec.get("level") is not None:
        return rec
    return {
        **rec,
        "summary": line["summary"],
        "summary_source": "model",
        "summary_model_ref": line.get("model_ref"),
    }


def attempt(home: Home, episode_id: str, text: str, model_ref: str) -> None:
    jsonl.append(
        home.context_summaries,
        {
            "schema_version": SCHEMA_VERSION,
            "kind": "attempt",
            "episode_id": episode_id,
            "input_digest": digest(text),
            "model_ref": model_ref,
            "created_at": clock.now_iso(),
        },
    )


def record(
    home: Home, episode: dict[str, Any], text: str, summary: str, model_ref: str, usage: dict
) -> dict[str, Any] | None:
    """Append the summary of `episode` unless it has one (caller holds the agent's lock)."""
    episode_id = str(episode["id"])
    if any(r.get("kind") == "summary" for r in lines_for(home, episode_id)):
        return None
    line = {
        "schema_version": SCHEMA_VERSION,
        "kind": "summary",
        "id": "sm-" + digest(episode_id + "\0" + text)[7:27],
        "episode_id": episode_id,
        "workspace_id": episode.get("workspace_id") or "agent_home",
        "turns": episode.get("turns"),
        "summary": summary,
        "summary_source": "model",
        "model_ref": model_ref,
        "input_digest": digest(text),
        "usage": usage,
        "created_at": clock.now_iso(),
    }
    jsonl.append(home.context_summaries, line)
    return line

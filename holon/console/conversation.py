"""The console's main conversation: operator messages from `messages.jsonl` and the operator
records of `events.jsonl` (holon.feed.present), read from the ledgers whoever wrote them, and
shown at a display level (info, verbose, debug; 3, 4, 5). Plain data: no Textual here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from holon.feed.present import LEVELS, present, shown
from holon.feed.reader import at_end
from holon.home.layout import Home
from holon.safetext import for_terminal
from holon.store import jsonl

BACKLOG_EVENTS = 300  # events replayed when the console opens an agent
BACKLOG_MESSAGES = 50
KEPT_ENTRIES = 3000  # a console left open for days keeps the newest rows
ALIASES = {"3": "info", "4": "verbose", "5": "debug"}
OPERATOR_KINDS = ("operator_prompt",)


def level_named(value: str) -> str | None:
    """`info`, `verbose` or `debug` from a name or its number; None when it is neither."""
    value = ALIASES.get(value.strip(), value.strip().lower())
    return value if value in LEVELS else None


@dataclass
class Entry:
    """One row of the conversation: an operator message (`record` None) or an operator record."""

    at: str
    text: str
    record: dict[str, Any] | None = None
    message_id: str | None = None

    @property
    def kind(self) -> str:
        if self.record is None:
            return "operator"
        if self.record["category"] == "brief" or self.record["visibility"] == "action_required":
            return "brief"
        return "activity"


@dataclass
class Conversation:
    """An agent's conversation, backlog first, then what the ledgers gain at each `poll`."""

    home: Home
    entries: list[Entry] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.tail = at_end(self.home)
        self.messages_offset = jsonl.end_offset(self.home.messages)
        events = [
            e
            for e in jsonl.tail(self.home.events, BACKLOG_EVENTS)
            if isinstance(e.get("event_seq"), int) and e["event_seq"] <= self.tail.since_seq
        ]
        backlog = [_entry(present(e)) for e in events]
        first = backlog[0].at if backlog else ""
        named = {e.record["provenance"].get("message_id") for e in backlog if e.record}
        for m in jsonl.tail(self.home.messages, BACKLOG_MESSAGES):
            if m.get("id") in named or str(m.get("created_at") or "") >= first:
                entry = self._message(m)
                backlog += [entry] if entry is not None else []
        self.entries = sorted(backlog, key=lambda e: e.at)

    def poll(self) -> list[Entry]:
        """The entries appended since the last poll, operator messages before the records."""
        messages, self.messages_offset = jsonl.read_from(self.home.messages, self.messages_offset)
        new = [e for e in (self._message(m) for m in messages) if e is not None]
        new += [_entry(r) for r in self.tail.poll()]
        self.entries.extend(new)
        del self.entries[:-KEPT_ENTRIES]
        return new

    def _message(self, m: dict[str, Any]) -> Entry | None:
        if m.get("kind") not in OPERATOR_KINDS or m.get("id") in self._seen:
            return None
        self._seen.add(str(m.get("id")))
        body = m.get("body") if isinstance(m.get("body"), dict) else {}
        text = body.get("text") if isinstance(body.get("text"), str) else str(body)
        return Entry(str(m.get("created_at") or ""), for_terminal(text), None, m.get("id"))


def _entry(record: dict[str, Any]) -> Entry:
    text = record.get("body") or record["summary"]
    return Entry(str(record["at"] or ""), for_terminal(str(text)), record)


def visible(entry: Entry, level: str) -> bool:
    """Operator messages always; a record when the level shows it, never a state sync."""
    if entry.record is None:
        return True
    if entry.record["category"] == "state sync":
        return False  # projection refresh signals, not conversation messages (spec)
    return shown(entry.record, level)


def settles(entry: Entry) -> str | None:
    """The message id a record settles (its result or failure brief, or its turn's end)."""
    record = entry.record
    if record is None:
        return None
    if record["source_event_kind"] in ("brief_recorded", "turn_terminal", "message_deferred"):
        return record["provenance"].get("message_id")
    return None


def activity(entry: Entry) -> str | None:
    """A one-line description of what the running turn does: a progress record or a tool row
    (the rows verbose shows), never a trace record's internals."""
    record = entry.record
    if record is None or not (record["visibility"] == "progress" or record["category"] == "tool"):
        return None
    return for_terminal(record["summary"]).replace("\n", " ")

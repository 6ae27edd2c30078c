"""Reading operator records from agents' event ledgers: a backlog from any event_seq, then new
records as they are appended (one `Tail` per agent, at a logical offset of events.jsonl)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from holon.feed.present import present, shown
from holon.home.layout import Home
from holon.store import jsonl


class Tail:
    """One agent's records after `since_seq`, read from the ledger's logical offset onwards (a
    rotation into segments does not move it)."""

    def __init__(self, home: Home, since_seq: int = 0, offset: int = 0) -> None:
        self.home = home
        self.since_seq = since_seq
        self.offset = offset

    def poll(self) -> list[dict[str, Any]]:
        """The records appended since the last poll (the whole backlog on the first)."""
        events, self.offset = jsonl.read_from(self.home.events, self.offset)
        out = []
        for event in events:
            seq = event.get("event_seq")
            if isinstance(seq, int) and seq > self.since_seq:
                self.since_seq = seq
                out.append(present(event))
        return out


def at_end(home: Home) -> Tail:
    """A tail that reports only what is appended from now on."""
    last = jsonl.last(home.events) or {}
    seq = last.get("event_seq")
    return Tail(home, seq if isinstance(seq, int) else 0, jsonl.end_offset(home.events))


def records(home: Home, since_seq: int = 0) -> list[dict[str, Any]]:
    return Tail(home, since_seq).poll()


def merged(tails: Iterable[Tail], level: str) -> Iterator[dict[str, Any]]:
    """The backlog of several agents, shown at `level`, in time order (event_seq within one)."""
    streams = [[r for r in t.poll() if shown(r, level)] for t in tails]
    return heapq.merge(*streams, key=lambda r: (r["at"] or "", r["agent_id"] or ""))


class Feed:
    """The operator feed over a set of agents that may grow (`homes` is asked again each poll):
    an agent first seen while following is read from its first event."""

    def __init__(self, homes: Callable[[], list[Home]], level: str, since_seq: int = 0) -> None:
        self.homes, self.level, self.since_seq = homes, level, since_seq
        self.tails: dict[str, Tail] = {}

    def backlog(self) -> Iterator[dict[str, Any]]:
        for home in self.homes():
            self.tails[str(home.root)] = Tail(home, self.since_seq)
        return merged(self.tails.values(), self.level)

    def poll(self) -> list[dict[str, Any]]:
        for home in self.homes():
            self.tails.setdefault(str(home.root), Tail(home))
        return [r for t in self.tails.values() for r in t.poll() if shown(r, self.level)]


class MessageScope:
    """The records of one message's turns, as they are appended (what `holon prompt -v` shows):
    begun at the ledger's end before the message is admitted, so a new message never inherits an
    earlier turn's preview; a record belongs when it names the message or one of its turns."""

    def __init__(self, home: Home, level: str) -> None:
        self.tail, self.level = at_end(home), level
        self.message_id: str | None = None
        self.turns: set[str] = set()

    def poll(self) -> list[dict[str, Any]]:
        out = []
        for record in self.tail.poll():
            prov = record["provenance"]
            if self.message_id and prov.get("message_id") == self.message_id:
                if prov.get("turn_id"):
                    self.turns.add(prov["turn_id"])
            elif prov.get("turn_id") not in self.turns:
                continue
            if shown(record, self.level):
                out.append(record)
        return out

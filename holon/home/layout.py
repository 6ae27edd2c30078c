"""The agent home layout (see man/holon-home.5): every path of a home, decided once."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from holon.store.queue import Queue

HOME_FORMAT = 1

GITIGNORE = """\
# runtime-local files that never belong in git
locks/
queue/tmp/
indexes/
tasks/*/stdin
tasks/*/stdin.fifo
tasks/*/control.sock
*.tmp.*
"""


class Home:
    """Paths of one agent home. Creates nothing on construction."""

    def __init__(self, root: str | Path, agent_id: str | None = None) -> None:
        self.root = Path(root).absolute()
        self._agent_id = agent_id

    @property
    def agent_id(self) -> str:
        if self._agent_id is None:
            from holon.store.atomic import read_json

            ident = read_json(self.agent_json) or {}
            self._agent_id = ident.get("agent_id") or self.root.name
        return self._agent_id

    @cached_property
    def dot(self) -> Path:
        return self.root / ".holon"

    agents_md = property(lambda self: self.root / "AGENTS.md")
    agent_json = property(lambda self: self.dot / "agent.json")
    state_json = property(lambda self: self.dot / "state.json")
    ledger = property(lambda self: self.dot / "ledger")
    messages = property(lambda self: self.ledger / "messages.jsonl")
    transcript = property(lambda self: self.ledger / "transcript.jsonl")
    events = property(lambda self: self.ledger / "events.jsonl")
    briefs = property(lambda self: self.ledger / "briefs.jsonl")
    work_items = property(lambda self: self.ledger / "work_items.jsonl")
    context_episodes = property(lambda self: self.ledger / "context_episodes.jsonl")
    turns = property(lambda self: self.ledger / "turns.jsonl")
    tasks = property(lambda self: self.dot / "tasks")
    timers = property(lambda self: self.dot / "timers")
    artifacts = property(lambda self: self.dot / "artifacts")
    indexes = property(lambda self: self.dot / "indexes")
    locks = property(lambda self: self.dot / "locks")
    turn_lock = property(lambda self: self.locks / "turn.lock")
    state_lock = property(lambda self: self.locks / "state.lock")
    next_due = property(lambda self: self.dot / "next_due")
    wake_hint = property(lambda self: self.dot / "wake_hint.json")
    triggers = property(lambda self: self.dot / "triggers")
    work_items_dir = property(lambda self: self.root / "work-items")

    @cached_property
    def queue(self) -> Queue:
        return Queue(self.dot / "queue")

    def exists(self) -> bool:
        return self.agent_json.is_file()

    def ensure_dirs(self) -> None:
        for d in (self.ledger, self.tasks, self.timers, self.artifacts, self.indexes, self.locks):
            d.mkdir(parents=True, exist_ok=True)
        self.queue.ensure()

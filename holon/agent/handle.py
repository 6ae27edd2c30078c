"""One agent's persisted surfaces: state, ledgers, events (with event_seq) and briefs.

Every ledger append and every read-modify-write of state happens inside a
short `state.lock` section; ledger records are appended before the state that
they describe is replaced (log, then change).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from collections.abc import Iterator
from typing import Any

from holon import clock
from holon.home.layout import Home
from holon.ids import new_id
from holon.model.records import AgentState, AgentStatus, BriefRecord, TranscriptEntry
from holon.store import jsonl
from holon.store.atomic import read_json, write_json
from holon.store.locks import FileLock


class Agent:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.id = home.agent_id
        self._lock_depth = 0
        self._lock = FileLock(home.state_lock)

    # -- locking ---------------------------------------------------------
    @contextmanager
    def state_lock(self) -> Iterator[None]:
        """Re-entrant within this process; a short section across processes."""
        if self._lock_depth == 0:
            self.home.locks.mkdir(parents=True, exist_ok=True)
            self._lock.acquire(blocking=True, timeout=60.0)
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0:
                self._lock.release()

    # -- state -----------------------------------------------------------
    def state(self) -> AgentState:
        data = read_json(self.home.state_json)
        if not data:
            return AgentState(id=self.id)
        return AgentState.model_validate(data)

    def save_state(self, state: AgentState) -> None:
        with self.state_lock():
            write_json(self.home.state_json, state.model_dump(mode="json", exclude_none=False))

    def update_state(self, fn: Callable[[AgentState], None]) -> AgentState:
        with self.state_lock():
            state = self.state()
            fn(state)
            write_json(self.home.state_json, state.model_dump(mode="json"))
            return state

    def identity(self) -> dict[str, Any]:
        return read_json(self.home.agent_json, {}) or {}

    # -- ledgers ---------------------------------------------------------
    def event(self, kind: str, /, **data: Any) -> dict[str, Any]:
        with self.state_lock():
            last = jsonl.last(self.home.events)
            seq = int(last.get("event_seq", 0)) + 1 if last else 1
            rec = {"schema_version": 1, "id": new_id("evt"), "agent_id": self.id, "event_seq": seq,
                   "created_at": clock.now_iso(), "kind": kind, "data": data}
            jsonl.append(self.home.events, rec)
            return rec

    def transcript(self, kind: str, /, *, turn_id: str | None = None, message_id: str | None = None,
                   **data: Any) -> dict[str, Any]:
        entry = TranscriptEntry(id=new_id("tr"), agent_id=self.id, created_at=clock.now_iso(), kind=kind,
                                turn_id=turn_id, message_id=message_id, data=data)
        rec = entry.model_dump(mode="json")
        with self.state_lock():
            jsonl.append(self.home.transcript, rec)
        return rec

    def transcript_offset(self) -> int:
        try:
            return self.home.transcript.stat().st_size
        except FileNotFoundError:
            return 0

    def brief(self, kind: str, text: str, *, related_message_id: str | None = None,
              visibility: str = "turn_result", work_item_id: str | None = None,
              related_task_id: str | None = None, turn_id: str | None = None) -> dict[str, Any]:
        rec = BriefRecord(id=new_id("brf"), agent_id=self.id, kind=kind, created_at=clock.now_iso(), text=text,
                          visibility=visibility, work_item_id=work_item_id,
                          related_message_id=related_message_id, related_task_id=related_task_id)
        data = rec.model_dump(mode="json")
        with self.state_lock():
            jsonl.append(self.home.briefs, data)
            self.transcript("brief", turn_id=turn_id, message_id=related_message_id, brief=data)
            self.update_state(lambda s: setattr(s, "last_brief_at", rec.created_at))
        return data

    def status(self) -> AgentStatus:
        return self.state().status

"""The Agent: one agent's persisted surfaces — state, ledgers, events (with event_seq) and briefs.

Every ledger append and every read-modify-write of state happens inside a
short `state.lock` section; ledger records are appended before the state that
they describe is replaced (log, then change).

Reads are cached. `state()` keeps the parsed state together with the
identity of the file it came from (inode, size, mtime, ctime): a later call
costs one stat and re-reads only when the file was replaced since, which is
what another process's write (pause, a wake hint, `holon model set`) does.
Our own writes replace the cache with what they wrote. `update_state` always
re-reads under the state lock unless the cache is still that file. The next
event_seq is cached the same way, against the size of `events.jsonl`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from holon import clock
from holon.home.layout import Home
from holon.ids import new_id
from holon.model.records import AgentState, AgentStatus, BriefRecord, TranscriptEntry
from holon.store import jsonl
from holon.store.atomic import read_json, write_json
from holon.store.locks import FileLock


def _file_key(path: os.PathLike) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class Agent:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.id = home.agent_id
        self._lock_depth = 0
        self._lock = FileLock(home.state_lock)
        self._state: AgentState | None = None
        self._state_key: tuple[int, int, int, int] | None = None
        self._events_end: tuple[int, int] | None = (
            None  # (size of events.jsonl, its last event_seq)
        )

    def __repr__(self) -> str:
        return f"Agent({self.id!r}, {str(self.home.root)!r})"

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
        """The current state; treat it as read-only (change it through update_state)."""
        key = _file_key(self.home.state_json)
        if self._state is None or key is None or key != self._state_key:
            data = read_json(self.home.state_json)
            self._state = AgentState.model_validate(data) if data else AgentState(id=self.id)
            self._state_key = key
        return self._state

    def _write_state(self, state: AgentState) -> None:
        write_json(self.home.state_json, state.model_dump(mode="json"))
        self._state, self._state_key = state, _file_key(self.home.state_json)

    def update_state(self, fn: Callable[[AgentState], None]) -> AgentState:
        with self.state_lock():
            state = self.state().model_copy(deep=True)
            fn(state)
            self._write_state(state)
            return state

    def identity(self) -> dict[str, Any]:
        return read_json(self.home.agent_json, {}) or {}

    # -- ledgers ---------------------------------------------------------
    def _next_event_seq(self) -> int:
        try:
            size = os.stat(self.home.events).st_size
        except FileNotFoundError:
            size = 0
        if self._events_end is not None and self._events_end[0] == size:
            return self._events_end[1] + 1
        last = jsonl.last(self.home.events)
        return int(last.get("event_seq", 0)) + 1 if last else 1

    def event(self, kind: str, /, **data: Any) -> dict[str, Any]:
        with self.state_lock():
            seq = self._next_event_seq()
            rec = {
                "schema_version": 1,
                "id": new_id("evt"),
                "agent_id": self.id,
                "event_seq": seq,
                "created_at": clock.now_iso(),
                "kind": kind,
                "data": data,
            }
            jsonl.append(self.home.events, rec)
            self._events_end = (os.stat(self.home.events).st_size, seq)
            return rec

    def transcript(
        self,
        kind: str,
        /,
        *,
        turn_id: str | None = None,
        message_id: str | None = None,
        **data: Any,
    ) -> dict[str, Any]:
        entry = TranscriptEntry(
            id=new_id("tr"),
            agent_id=self.id,
            created_at=clock.now_iso(),
            kind=kind,
            turn_id=turn_id,
            message_id=message_id,
            data=data,
        )
        rec = entry.model_dump(mode="json")
        with self.state_lock():
            jsonl.append(self.home.transcript, rec)
        return rec

    def transcript_offset(self) -> int:
        try:
            return self.home.transcript.stat().st_size
        except FileNotFoundError:
            return 0

    def brief(
        self,
        kind: str,
        text: str,
        *,
        related_message_id: str | None = None,
        visibility: str = "turn_result",
        work_item_id: str | None = None,
        related_task_id: str | None = None,
        turn_id: str | None = None,
    ) -> dict[str, Any]:
        rec = BriefRecord(
            id=new_id("brf"),
            agent_id=self.id,
            kind=kind,
            created_at=clock.now_iso(),
            text=text,
            visibility=visibility,
            work_item_id=work_item_id,
            related_message_id=related_message_id,
            related_task_id=related_task_id,
            workspace_id=self.state().active_workspace_id,
        )
        data = rec.model_dump(mode="json")
        with self.state_lock():
            jsonl.append(self.home.briefs, data)
            self.transcript("brief", turn_id=turn_id, message_id=related_message_id, brief=data)
            self.update_state(lambda s: setattr(s, "last_brief_at", rec.created_at))
        self.home.mark_memory_dirty()
        return data

    def status(self) -> AgentStatus:
        return self.state().status

"""The Agent: one agent's persisted surfaces — state, ledgers, events (with event_seq) and briefs.

Every ledger append and every read-modify-write of state happens inside a
short `state.lock` section; ledger records are appended before the state that
they describe is replaced (log, then change).

State is two files. `state.json` is the run state (AgentState: status, pids,
in-flight turns, counters, working memory), volatile and ignored by git;
`settings.json` is what an operator chose (holon.home.settings), tracked, and
written only when that part changes. `state()` merges them: a settings.json
that changed outside holon wins for its fields. A run state that is missing,
unreadable (set aside as `state.json.corrupt-<time>`) or ahead of the ledgers
is rebuilt from them (holon.home.runstate), with a `state_rebuilt` event
unless it was merely missing (a fresh clone).

Building an Agent touches no file. Its first read or write runs `ensure` first: a clone has
only what git keeps, so the runtime directories are re-created and an older format is upgraded
(once per process per home), and a missing run state is rebuilt. Callers that hold an Agent pass
it down instead of building another from the Home.

Reads are cached. `state()` keeps the parsed state together with the
identity of both files (inode, size, mtime, ctime): a later call costs two
stats and re-reads only when a file was replaced since, which is what another
process's write (pause, a wake hint, `holon model set`, a git checkout) does.
Our own writes replace the cache with what they wrote. `update_state` always
re-reads under the state lock unless the cache is still that file. The next
event_seq is cached the same way, against the size of `events.jsonl`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon import clock
from holon.home import migrate, settings
from holon.home.layout import Home, corrupt, read_identity
from holon.ids import new_id
from holon.store import jsonl
from holon.store.atomic import write_json
from holon.store.locks import FileLock
from holon.vocab import SCHEMA_VERSION

if TYPE_CHECKING:
    from holon.model.records import AgentState, AgentStatus

# The pydantic records (holon.model.records, and holon.home.runstate over them) are imported by the
# methods that read or write state: admission (`holon enqueue`, `holon prompt --no-wait`) takes the
# state lock and appends an event, and must not pay for pydantic (tests/cli/test_imports_admission).

FileKey = tuple[int, int, int, int] | None

# the homes this process has prepared (Agent.ensure): (root, agent id)
_ENSURED: set[tuple[str, str | None]] = set()


def _file_key(path: os.PathLike) -> FileKey:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def event_seq(rec: dict[str, Any]) -> int | None:
    """A record's event_seq, or None when it is not a non-negative integer (such a record is read
    like any other; the next event continues after the highest good one)."""
    seq = rec.get("event_seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else None


class Agent:
    def __init__(self, home: Home) -> None:
        self.home = home
        self._lock_depth = 0
        self._lock = FileLock(home.state_lock)
        self._state: AgentState | None = None
        self._state_key: tuple[FileKey, FileKey] | None = None
        self._settings: dict[str, Any] | None = None  # settings.json as last read or written
        self._events_end: tuple[int, int] | None = (
            None  # (size of events.jsonl, its last event_seq)
        )
        self._ensured = False

    def ensure(self) -> Agent:
        """Make the home usable: a clone has only what git keeps, so re-create the runtime
        directories, upgrade an older format, and rebuild a missing run state. The directories
        and the upgrade are done once per process per home; the run state is checked once per
        Agent. Every read or write of the Agent runs this first; call it to prepare a home
        before touching it by path."""
        if self._ensured:
            return self
        key = (os.fspath(self.home.root), self.id)
        if key not in _ENSURED:
            self.home.ensure_runtime()
            migrate.ensure_current(self.home)
            if self.home.agent_json.exists():  # not a home yet: the next Agent tries again
                _ENSURED.add(key)
        self._ensured = True
        if not self.home.state_json.exists() and self.home.agent_json.exists():
            self.state()
        return self

    @property
    def id(self) -> str:
        return self.home.agent_id  # read from agent.json when the Home was not given it

    def __repr__(self) -> str:
        return f"Agent({self.id!r}, {str(self.home.root)!r})"

    # -- locking ---------------------------------------------------------
    @contextmanager
    def state_lock(self) -> Iterator[None]:
        """Re-entrant within this process; a short section across processes."""
        self.ensure()
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
        self.ensure()
        if self._state is None or self._keys() != self._state_key:
            self._load()
        assert self._state is not None
        return self._state

    def _keys(self) -> tuple[FileKey, FileKey]:
        return _file_key(self.home.state_json), settings.file_key(self.home)

    def _load(self) -> None:
        """Read both files without a lock; anything to repair is decided again under it."""
        from holon.home import runstate

        key = self._keys()
        found = settings.read(self.home)
        try:
            state = runstate.read(self.home)
        except runstate.Unreadable:
            state = None
        if (
            state is None
            or runstate.rewound(self.home, state)
            or (found is not None and state.settings_basis != found)
        ):
            self._repair()
            return
        self._settings = found
        self._state, self._state_key = state, key

    def _repair(self) -> None:
        """Under the lock: adopt settings changed outside holon, or rebuild a run state that is
        missing, unreadable (set aside first) or ahead of the ledgers."""
        from holon.home import runstate

        with self.state_lock():
            key = self._keys()
            self._settings = settings.read(self.home)
            problem = None
            try:
                state = runstate.read(self.home)
            except runstate.Unreadable as exc:
                state, problem = None, str(exc)
            if state is not None and not runstate.rewound(self.home, state):
                if self._settings is not None and state.settings_basis != self._settings:
                    self._write_state(self._with_settings(state))
                else:
                    self._state, self._state_key = state, key
                return
            reason = "corrupt" if problem else ("ledger_rewound" if state else "missing")
            aside = self._set_aside(problem) if problem else None
            fresh = self._with_settings(runstate.rebuilt(self.home, self.id))
            try:
                self._write_state(fresh)
            except OSError:  # a home that cannot be written: the rebuilt state lives in memory
                self._state, self._state_key = fresh, self._keys()
        if reason != "missing":  # a fresh clone has no run state: nothing to report
            where = os.fspath(aside.relative_to(self.home.root)) if aside else None
            self.event("state_rebuilt", reason=reason, problem=problem, set_aside=where)

    def _set_aside(self, problem: str) -> Path | None:
        from holon.home import runstate

        try:
            return runstate.set_aside(self.home)
        except OSError:
            raise corrupt(self.home.state_json, problem, runstate.HINT) from None

    def _with_settings(self, state: AgentState) -> AgentState:
        from holon.model.records import AgentState

        if self._settings is None:
            return state
        merged = AgentState.model_validate(
            settings.overlay(state.model_dump(mode="json"), self._settings)
        )
        merged.settings_basis = dict(self._settings)
        return merged

    def _write_state(self, state: AgentState) -> None:
        """Settings first (only when their part changed), then the run state that records them."""
        data = state.model_dump(mode="json")
        chosen = settings.project(data)
        if chosen != self._settings:
            settings.write(self.home, chosen)
            self._settings = chosen
        state.settings_basis = data["settings_basis"] = chosen
        write_json(self.home.state_json, data)
        self._state, self._state_key = state, self._keys()

    def update_state(self, fn: Callable[[AgentState], None]) -> AgentState:
        with self.state_lock():
            state = self.state().model_copy(deep=True)
            fn(state)
            self._write_state(state)
            return state

    def identity(self) -> dict[str, Any]:
        """agent.json, checked (holon.home.layout.read_identity): `corrupt_state` names it."""
        self.ensure()
        return read_identity(self.home.agent_json)

    # -- ledgers ---------------------------------------------------------
    def events_rewritten(self) -> None:
        """events.jsonl was rewritten in place (holon.agent.ledgermerge renumbers a merge): the
        next event reads its last event_seq again instead of the cached one."""
        self._events_end = None

    def _next_event_seq(self) -> int:
        size = jsonl.end_offset(self.home.events)  # logical: a rotation does not move it
        if self._events_end is not None and self._events_end[0] == size:
            return self._events_end[1] + 1
        last = jsonl.last(self.home.events)
        if last is None:
            return 1
        seq = event_seq(last)
        if seq is None:  # a record written by hand or by another tool: the highest good one wins
            seqs = [event_seq(rec) for rec in jsonl.read(self.home.events)]
            seq = max((n for n in seqs if n is not None), default=0)
        return seq + 1

    def event(self, kind: str, /, **data: Any) -> dict[str, Any]:
        return self._event(kind, data, fsync=True)

    def telemetry(self, kind: str, /, **data: Any) -> dict[str, Any]:
        """An event that only reports (per-round timings and counts; nothing is recovered from
        it): appended without an fsync of its own. A killed process loses nothing (the line is in
        the page cache); a power loss may lose it unless a later event was synced, as the turn's
        terminal is."""
        return self._event(kind, data, fsync=False)

    def _event(self, kind: str, data: dict[str, Any], *, fsync: bool) -> dict[str, Any]:
        with self.state_lock():
            seq = self._next_event_seq()
            rec = {
                "schema_version": SCHEMA_VERSION,
                "id": new_id("evt"),
                "agent_id": self.id,
                "event_seq": seq,
                "created_at": clock.now_iso(),
                "kind": kind,
                "data": data,
            }
            jsonl.append(self.home.events, rec, fsync=fsync)
            self._events_end = (jsonl.end_offset(self.home.events), seq)
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
        from holon.model.records import TranscriptEntry

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
        self.ensure()
        return jsonl.end_offset(self.home.transcript)  # logical: across rotated segments

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
        record_time: bool = True,
    ) -> dict[str, Any]:
        """Write a brief (transcript line, then the brief ledger). Without `record_time`, the
        caller sets `last_brief_at` in its own state write (a turn's settle writes state once)."""
        from holon.model.records import BriefRecord

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
            # the transcript line first: a turn resumed after a crash finds its brief there and
            # completes it (keep_brief) instead of writing a second one
            self.transcript("brief", turn_id=turn_id, message_id=related_message_id, brief=data)
            jsonl.append(self.home.briefs, data)
            self._brief_event(data, turn_id)
            if record_time:
                self.update_state(lambda s: setattr(s, "last_brief_at", rec.created_at))
        self.home.mark_memory_dirty()
        return data

    def keep_brief(self, data: dict[str, Any]) -> None:
        """Make sure a brief found in the transcript of a resumed turn is in the brief ledger (a
        crash may have come between the two appends); never a second copy. Looks at the ledger's
        tail only: the brief was written by the turn being resumed."""
        with self.state_lock():
            if any(b.get("id") == data.get("id") for b in jsonl.tail(self.home.briefs, 64)):
                return
            jsonl.append(self.home.briefs, data)
            self._brief_event(data, None)
            self.update_state(lambda s: setattr(s, "last_brief_at", data.get("created_at")))

    def _brief_event(self, data: dict[str, Any], turn_id: str | None) -> None:
        """The audit event of a durable brief: what the operator feed and the notify hook present
        (holon.feed), so it carries the brief's text and the ids it is bound to."""
        self.event(
            "brief_recorded",
            brief_id=data["id"],
            brief_kind=data["kind"],
            visibility=data.get("visibility") or "turn_result",
            text=data.get("text") or "",
            message_id=data.get("related_message_id"),
            task_id=data.get("related_task_id"),
            work_item_id=data.get("work_item_id"),
            turn_id=turn_id,
        )

    def status(self) -> AgentStatus:
        return self.state().status

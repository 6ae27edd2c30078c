"""`holon gc`: remove what retention allows (artifacts, finished task directories, old ledger
segments) and nothing a reader still needs.

What may go is set by `[retention]` in config.toml (holon.config.RETENTION_DEFAULTS). Whatever
the settings, gc keeps:
- anything named by the transcript from the start of the context's replay window (or an
  in-flight turn, or the open episode, whichever is earliest) to its end, and by queued messages
  (new/ and cur/: not settled yet);
- running tasks, tasks in `active_task_ids`, and a task whose result message is not settled;
- a ledger segment the memory index has not indexed to its end, one the replay window or an
  in-flight turn still reads, an episode segment no roll-up covers yet (the episode block shows
  every turn before the window through them), and the newest segment of each ledger (its name
  holds where the live ledger's offsets begin).
gc takes the agent's turn lock without waiting, as `holon tick` does; a busy agent is skipped and
reported. `dry_run` decides the same things and changes nothing.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holon import clock, config, paths
from holon.agent.handle import Agent
from holon.context import rollups
from holon.errors import HolonError
from holon.home import registry
from holon.home.layout import Home, read_identity
from holon.store import artifacts, jsonl
from holon.store.locks import FileLock, LockBusy
from holon.tasks import store as tasks

DAY = 86400.0
ORPHAN_AGE = DAY  # a task directory without task.json (a spawn that never ended)
ARTIFACT_NAME = re.compile(rb"artifacts/([A-Za-z0-9_.-]+)")
ROTATED = ("transcript", "events", "messages", "briefs", "context_episodes")
INDEXED = {"transcript": "transcript", "briefs": "briefs", "context_episodes": "episodes"}


@dataclass
class Removal:
    kind: str  # artifact | task | segment
    path: str  # relative to the home
    bytes: int
    reason: str


@dataclass
class GcReport:
    agent_id: str
    home: str
    outcome: str = "done"  # done | dry_run | busy
    removed: list[Removal] = field(default_factory=list)
    kept: int = 0  # candidates old enough that a reader still needs

    @property
    def bytes_freed(self) -> int:
        return sum(r.bytes for r in self.removed)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "home": self.home,
            "outcome": self.outcome,
            "removed": [vars(r) for r in self.removed],
            "kept_in_use": self.kept,
            "bytes_freed": self.bytes_freed,
        }


def gc(home: Home, *, dry_run: bool = False, now: float | None = None) -> GcReport:
    report = GcReport(home.agent_id, str(home.root), "dry_run" if dry_run else "done")
    lock = FileLock(home.turn_lock)
    try:
        lock.acquire(blocking=False)
    except LockBusy:
        report.outcome = "busy"
        return report
    try:
        agent = Agent(home).ensure()
        plan(agent, report, time.time() if now is None else now)
        if not dry_run:
            for r in report.removed:
                _remove(home, r)
    finally:
        lock.release()
    return report


def plan(agent: Agent, report: GcReport, now: float) -> None:
    """Fill `report` with what retention removes now."""
    home = agent.home
    window_from = _replay_start(agent)
    refs = _referenced(home, window_from)
    _plan_artifacts(home, refs, report, now)
    _plan_tasks(agent, refs, report, now)
    _plan_children(home, report, now)
    _plan_segments(home, window_from, report, now)


def _remove(home: Home, r: Removal) -> None:
    path = home.root / r.path
    if r.kind == "child":  # first out of the registry's archive, then away from readers
        if not artifacts.removing(path.name):
            registry.drop_archived(path.name)
        artifacts.remove_tree(path)
        _drop_empty(paths.worktrees_dir() / path.name)
    elif r.kind == "task":
        artifacts.remove_tree(path)
    else:
        artifacts.remove_file(path)


def _replay_start(agent: Agent) -> int:
    """The earliest transcript offset a reader replays: the context window, an in-flight turn,
    the open episode."""
    state = agent.state()
    ctx = state.context
    offsets = [ctx.window_start, ctx.episodes_through]
    for v in state.inflight.values():
        offsets += [int(v.get("transcript_offset", 0)), int(v.get("segment_offset", 0) or 0)]
    builder = state.working_memory.active_episode_builder or {}
    if "start_offset" in builder:
        offsets.append(int(builder["start_offset"]))
    return max(0, min(offsets))


def _referenced(home: Home, window_from: int) -> bytes:
    """The bytes that name what readers still use: the replay window of the transcript and the
    unsettled messages."""
    parts = [jsonl.read_bytes_from(home.transcript, window_from)]
    for d in (home.queue.new, home.queue.cur):
        for p in _files(d):
            try:
                parts.append(p.read_bytes())
            except OSError:
                continue
    return b"\n".join(parts)


def _files(d: Path) -> list[Path]:
    try:
        return [p for p in d.iterdir() if p.is_file()]
    except FileNotFoundError:
        return []


def _plan_artifacts(home: Home, refs: bytes, report: GcReport, now: float) -> None:
    keep_days = config.retention("artifact_keep_days")
    max_bytes = config.retention("artifact_max_bytes")
    if not keep_days and not max_bytes:
        return
    named = {m.group(1).decode() for m in ARTIFACT_NAME.finditer(refs)}
    items = []
    for p in _files(home.artifacts):
        st = p.stat()
        items.append((st.st_mtime, p, st.st_size))
    items.sort()
    total = sum(size for _, _, size in items)
    for mtime, p, size in items:  # oldest first
        old = bool(keep_days) and now - mtime > keep_days * DAY
        over = bool(max_bytes) and total > max_bytes
        if not (old or over):
            continue
        if p.name in named:
            report.kept += 1
            continue
        why = f"older than {keep_days} days" if old else f"artifacts over {max_bytes} bytes"
        report.removed.append(Removal("artifact", _rel(home, p), size, why))
        total -= size


def _plan_tasks(agent: Agent, refs: bytes, report: GcReport, now: float) -> None:
    home = agent.home
    keep_days = config.retention("task_keep_days")
    if not keep_days:
        return
    live = set(tasks.active_ids(home)) | set(agent.state().active_task_ids)
    for d in _dirs(home.tasks):
        if artifacts.removing(d.name):
            report.removed.append(
                Removal("task", _rel(home, d), _du(d), "left by an interrupted gc")
            )
            continue
        rec = tasks.load(home, d.name)
        if rec is None:
            if now - d.stat().st_mtime > ORPHAN_AGE:
                report.removed.append(Removal("task", _rel(home, d), _du(d), "no task.json"))
            continue
        finished = rec.get("finished_at") or rec.get("updated_at")
        if rec.get("status") not in tasks.TERMINAL or not finished:
            continue
        if now - clock.parse_iso(finished).timestamp() <= keep_days * DAY:
            continue
        msg = rec.get("result_message_id") or ""
        if d.name in live or d.name.encode() in refs or (msg and msg.encode() in refs):
            report.kept += 1
            continue
        report.removed.append(
            Removal("task", _rel(home, d), _du(d), f"finished over {keep_days} days ago")
        )


def _plan_children(home: Home, report: GcReport, now: float) -> None:
    """Private children archived over task_keep_days ago (their supervision ended then): their
    homes go, so what a parent keeps does not grow with every child it ever had."""
    keep_days = config.retention("task_keep_days")
    if not keep_days:
        return
    for d in _dirs(home.children_dir):
        if artifacts.removing(d.name):
            report.removed.append(
                Removal("child", _rel(home, d), _du(d), "left by an interrupted gc")
            )
            continue
        try:
            archived = read_identity(Home(d).agent_json).get("archived_at")
        except HolonError:
            continue  # a broken child home is doctor's to report, never gc's to remove
        if not isinstance(archived, str) or not archived:
            continue
        if now - clock.parse_iso(archived).timestamp() > keep_days * DAY:
            report.removed.append(
                Removal("child", _rel(home, d), _du(d), f"archived over {keep_days} days ago")
            )


def _drop_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass  # not there, or a retained worktree is still in it


def _dirs(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.is_dir() and p.name != "active")
    except FileNotFoundError:
        return []


def _du(d: Path) -> int:
    total = 0
    for root, _, names in os.walk(d):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return total


def _plan_segments(home: Home, window_from: int, report: GcReport, now: float) -> None:
    keep_days = config.retention("segment_keep_days")
    if not keep_days:
        return
    indexed = _index_offsets(home)
    unrolled = rollups.cursor(home)[1]  # episodes from here on are in no roll-up yet
    for stem in ROTATED:
        path = home.ledger / f"{stem}.jsonl"
        segs = jsonl.segments(path)
        limit = indexed.get(INDEXED[stem], 0) if stem in INDEXED else None
        for seg in segs[:-1]:  # the newest segment stays: it says where the live offsets begin
            if now - seg.mtime <= keep_days * DAY:
                continue
            needed = (
                (limit is not None and seg.end > limit)
                or (stem == "transcript" and seg.end > window_from)
                or (stem == "context_episodes" and seg.end > unrolled)
            )
            if needed:
                report.kept += 1
                continue
            report.removed.append(
                Removal("segment", _rel(home, seg.path), seg.size, f"older than {keep_days} days")
            )


def _index_offsets(home: Home) -> dict[str, int]:
    """How far the memory index has read each ledger (nothing read: 0)."""
    if not home.memory_index.exists():
        return {}
    try:
        conn = sqlite3.connect(f"file:{home.memory_index}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT name, offset FROM sources").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    return {str(name): int(offset) for name, offset in rows}


def _rel(home: Home, p: Path) -> str:
    return p.relative_to(home.root).as_posix()

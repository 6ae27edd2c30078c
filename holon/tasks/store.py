"""Task records on disk: `Home.task_dir(id)/task.json` and `Home.tasks_active/<task_id>` markers.

Layout of one command task directory:
    task.json      the TaskRecord (atomic replace; the terminal record is authoritative)
    output.log     combined output (stdout and stderr as read, or the tty transcript)
    (exit_status   "<n>\\n" from the wrapper shell: in `.holon/scratch/<task_id>/`, the one
                   directory a sandboxed command may write; see make_scratch)
    stdin.fifo     input channel for accepts_input tasks (framed, read by the supervisor;
                   removed when the task ends)
    stop_requested present once TaskStop asked the task to stop
    ended, handoff.lock, spawn_error.json   a tty command's end, and who reports it
                   (holon.tasks.command.handoff)
The marker `tasks/active/<task_id>` holds the supervisor pid while it is alive.
This module is stdlib only: the supervisor and the idle tick import it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon import clock, jsonfile, vocab
from holon.errors import HolonError
from holon.home import dueindex, relocate
from holon.home.layout import Home, corrupt, describe
from holon.store.atomic import write_json, write_text

if TYPE_CHECKING:  # the record's keys, typed (stdlib, but kept off the light path)
    from holon.model.dicts import CommandTaskRecord

TERMINAL = vocab.TASK_TERMINAL


def cmd_digest(cmd: str, workdir: str, shell: str, login: bool, tty: bool) -> str:
    """Command identity: what decides whether two ExecCommand calls are the same command."""
    key = json.dumps([cmd, workdir, shell, bool(login), bool(tty)], ensure_ascii=False)
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


TASK_HINT = "fix its JSON, or move the task's directory out of .holon/tasks/ (it is then forgotten)"


def read_record(path: Path, *, listed: bool = False) -> dict[str, Any] | None:
    """A task.json (None when missing); `corrupt_state` naming the file when it is not a JSON
    object with an id and a status (`listed`: and the kind and command a listing shows)."""
    try:
        rec = jsonfile.object_of(path)
    except (ValueError, OSError) as exc:
        raise corrupt(path, describe(exc), TASK_HINT) from None
    if rec is None:
        return None
    lacks = [k for k in ("id", "status") if not isinstance(rec.get(k), str)]
    if listed and not isinstance(rec.get("kind"), str):
        lacks.append("kind")
    if listed and rec.get("kind") == "command" and not isinstance(rec.get("command"), dict):
        lacks.append("command")
    if lacks:
        raise corrupt(path, f"lacks {', '.join(lacks)} (or has the wrong type)", TASK_HINT)
    return rec


def load(home: Home, task_id: str, *, strict: bool = False) -> dict[str, Any] | None:
    """The task's record, None when there is none; a corrupt one is None too (the runtime goes
    on without it; `holon task list` reports it) unless `strict`: then `corrupt_state`."""
    if not task_id or "/" in task_id or task_id.startswith("."):
        return None
    try:
        return _placed(home, read_record(home.task_dir(task_id) / "task.json"))
    except HolonError:
        if strict:
            raise
        return None


def _placed(home: Home, record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A child task's `child_home` re-derived from the parent home where it is read, its
    workspace and worktree placed in this HOLON_HOME (holon.home.relocate): a copied or moved
    home never reaches back to the child home or the worktree at the old place."""
    child_id = record.get("child_agent_id") if isinstance(record, dict) else None
    if isinstance(child_id, str) and record.get("child_home"):
        try:
            record["child_home"] = str(home.child_home(child_id))
        except HolonError:  # not a valid id: the record is left as stored
            pass
    return relocate.child_task(record, to_store=False) if isinstance(record, dict) else record


def save(home: Home, record: dict[str, Any]) -> None:
    record["updated_at"] = clock.now_iso()
    write_json(
        home.task_dir(record["id"]) / "task.json", relocate.child_task(record, to_store=True)
    )


def new_record(
    agent_id: str,
    task_id: str,
    command: dict[str, Any],
    *,
    parent_message_id: str | None,
    wrapper_pid: int,
    supervisor_pid: int | None = None,
) -> CommandTaskRecord:
    now = clock.now_iso()
    return {
        "schema_version": vocab.SCHEMA_VERSION,
        "id": task_id,
        "agent_id": agent_id,
        "kind": "command_task",
        "status": vocab.TASK_RUNNING,
        "summary": f"command: {preview(command['cmd'])}",
        "command": command,
        "created_at": now,
        "started_at": now,
        "updated_at": now,
        "finished_at": None,
        "exit_status": None,
        "signal": None,
        "pid": wrapper_pid,
        "supervisor_pid": supervisor_pid,
        "failure_artifact": None,
        "parent_message_id": parent_message_id,
        # every task has a parent: the message whose turn started it, or the operator
        # (`holon tool call`), named explicitly rather than left blank
        "origin": "turn" if parent_message_id else "operator",
        "result_message_id": None,
        "stop_requested": False,
    }


def preview(cmd: str, limit: int = 80) -> str:
    one = " ".join(cmd.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def set_active(home: Home, task_id: str, pid: int) -> None:
    path = home.tasks_active / task_id
    path.parent.mkdir(parents=True, exist_ok=True)
    dueindex.mark(home.root)  # marked while the task runs: a supervisor that dies writes nothing
    write_text(path, f"{pid}\n")
    dueindex.mark(home.root)


def read_marker(home: Home, task_id: str) -> int:
    try:
        return int((home.tasks_active / task_id).read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def clear_active(home: Home, task_id: str) -> None:
    try:
        os.unlink(home.tasks_active / task_id)
    except FileNotFoundError:
        pass


def active_ids(home: Home) -> list[str]:
    try:
        return sorted(p.name for p in home.tasks_active.iterdir() if not p.name.startswith("."))
    except FileNotFoundError:
        return []


def all_records(home: Home, bad: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every task record, oldest first; a corrupt one is skipped (and added as
    {task_id, status: "corrupt", error: {kind, message, hint}} to `bad`)."""
    out = []
    try:
        entries = sorted(home.tasks.iterdir())
    except FileNotFoundError:
        return []
    for d in entries:
        if d.name == "active" or not d.is_dir():
            continue
        try:
            rec = _placed(home, read_record(d / "task.json", listed=True))
        except HolonError as exc:
            if bad is not None:
                bad.append({"task_id": d.name, "status": "corrupt", "error": exc.to_dict()})
            continue
        if rec:
            out.append(rec)
    out.sort(key=lambda r: r.get("created_at") or "")
    return out


def find_running(home: Home, digest: str) -> dict[str, Any] | None:
    """The live task running the command with this identity, if any."""
    for task_id in active_ids(home):
        rec = load(home, task_id)
        if rec and rec.get("status") == "running" and rec["command"].get("cmd_digest") == digest:
            return rec
    return None


def make_scratch(home: Home, task_id: str) -> Path:
    """The command's own writable directory (`.holon/scratch/<task_id>/`, 0700): its exit file,
    and its TMPDIR in the read-only sandbox. Removed when the command or its task ends."""
    path = home.scratch_dir(task_id)
    os.makedirs(home.scratch, mode=0o700, exist_ok=True)
    os.mkdir(path, 0o700)
    return path


def remove_scratch(home: Home, task_id: str) -> None:
    shutil.rmtree(home.scratch_dir(task_id), ignore_errors=True)


def read_exit_status(home: Home, task_id: str) -> int | None:
    """The wrapper writes "<n>\\n" in one write; a file without the newline is not finished yet.
    It lands in the command's scratch directory (in the task directory, for a task started
    before scratch directories existed)."""
    for path in (home.scratch_dir(task_id), home.task_dir(task_id)):
        try:
            text = (path / "exit_status").read_text()
            break
        except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
            continue
    else:
        return None
    if not text.endswith("\n"):
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

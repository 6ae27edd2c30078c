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

from holon import clock, vocab
from holon.home import dueindex
from holon.home.layout import Home
from holon.store.atomic import read_json, write_json, write_text

if TYPE_CHECKING:  # the record's keys, typed (stdlib, but kept off the light path)
    from holon.model.dicts import CommandTaskRecord

TERMINAL = vocab.TASK_TERMINAL


def cmd_digest(cmd: str, workdir: str, shell: str, login: bool, tty: bool) -> str:
    """Command identity: what decides whether two ExecCommand calls are the same command."""
    key = json.dumps([cmd, workdir, shell, bool(login), bool(tty)], ensure_ascii=False)
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def load(home: Home, task_id: str) -> dict[str, Any] | None:
    if not task_id or "/" in task_id or task_id.startswith("."):
        return None
    return read_json(home.task_dir(task_id) / "task.json")


def save(home: Home, record: dict[str, Any]) -> None:
    record["updated_at"] = clock.now_iso()
    write_json(home.task_dir(record["id"]) / "task.json", record)


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


def all_records(home: Home) -> list[dict[str, Any]]:
    out = []
    try:
        entries = sorted(home.tasks.iterdir())
    except FileNotFoundError:
        return []
    for d in entries:
        if d.name == "active" or not d.is_dir():
            continue
        rec = read_json(d / "task.json")
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

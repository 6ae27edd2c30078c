"""Who owns a tty command's end: the tick that started it, or the task it was promoted to.

A tty command runs under its supervisor from the start (holon.tasks.command.terminal,
holon.tasks.command.ptytask), so the tick that started it and the supervisor both see
it end. Exactly one of them reports it, decided under `handoff.lock` in the
task directory:

* the supervisor, once the command has ended and its output is all in
  `output.log`, writes `ended` (exit status and signal) under the lock and then
  reads `promoted` from the record;
* the tick, at the yield deadline, takes the lock: if `ended` exists the
  command finished in time and the tick reports it; otherwise it marks the
  record `promoted` and the supervisor will admit the task_result.

A tick that died before its deadline never promotes: the supervisor sees the
starter gone and finishes the command as a task, so its result is delivered
rather than lost. Both files live in the task directory under `.holon/`, which
the command itself cannot write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from holon.home.layout import Home
from holon.store.atomic import read_json, write_json

ENDED = "ended"
SPAWN_ERROR = "spawn_error.json"
LOCK = "handoff.lock"


@contextmanager
def held(home: Home, task_id: str) -> Iterator[None]:
    from holon.store.locks import locked

    with locked(home.task_dir(task_id) / LOCK, timeout=30.0):
        yield


def write_ended(home: Home, task_id: str, exit_status: int | None, signal: int | None) -> None:
    write_json(home.task_dir(task_id) / ENDED, {"exit_status": exit_status, "signal": signal})


def read_ended(home: Home, task_id: str) -> dict[str, Any] | None:
    return _read(home, task_id, ENDED)


def write_spawn_error(home: Home, task_id: str, message: str, details: dict[str, Any]) -> None:
    write_json(home.task_dir(task_id) / SPAWN_ERROR, {"message": message, "details": details})


def read_spawn_error(home: Home, task_id: str) -> dict[str, Any] | None:
    return _read(home, task_id, SPAWN_ERROR)


def _read(home: Home, task_id: str, name: str) -> dict[str, Any] | None:
    """A handoff file as written (atomically), or None: missing, gone with its directory, or
    not a JSON object."""
    try:
        found = read_json(home.task_dir(task_id) / name)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def starter_alive(record: dict[str, Any]) -> bool:
    """Is the process that started the command (and may still report it inline) alive?"""
    from holon.procs import alive

    pid = int(record.get("starter_pid") or 0)
    return alive(pid)

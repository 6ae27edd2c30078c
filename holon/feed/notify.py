"""The notify hook: `[notify]` in config.toml runs an operator's command once for each new operator
record at the chosen levels, so an unattended agent can reach its operator.

    [notify]
    command = ["notify-send", "holon"]   # argv, no shell; the record is one JSON object on stdin
    levels = ["action_required"]         # any of the visibilities (present.VISIBILITIES)
    timeout_s = 10                       # a slower hook is stopped (its process group) and reported

1. after each round with tool calls, after a turn and at the end of every tick, the runtime calls
   `kick`: it never raises and never waits; it reads the records after the agent's cursor
   (`.holon/notify.json`) and, when one is at a notify level, starts a detached
   `python -m holon.feed.notify HOME`;
2. that process takes `locks/notify.lock` (held: the holder delivers), runs the command for each
   record in order, outside the sandbox with the sandbox's scrubbed environment (no provider keys),
   and advances the cursor after each run; a hook that fails or times out is a
   `notify_hook_failed` event (`holon doctor` reports it), and the next record goes on;
3. after releasing the lock it looks again, so a record appended while it finished is not left.
A crash between a run and its cursor write runs that record again (at least once); a record whose
hook never ran is found by the next tick's kick. An agent's first cursor skips records older than
BACKLOG_S, so turning the hook on does not replay an agent's history.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from holon import clock, config
from holon.errors import HolonError, UsageError
from holon.feed.present import VISIBILITIES
from holon.feed.reader import Tail
from holon.home.layout import Home
from holon.store import groupcommit
from holon.store.atomic import read_json, write_json
from holon.store.locks import FileLock, LockBusy

DEFAULT_LEVELS = ("action_required",)
DEFAULT_TIMEOUT_S = 10.0
BACKLOG_S = 86400
# a kick with nothing to deliver moves the cursor only past this many bytes of events: a cursor
# write is an fsync (~10 ms), a re-read of so many bytes much less
CURSOR_STRIDE = 32 * 1024
STDERR_CHARS = 300
HINT = (
    '[notify] takes command = ["prog", "arg", ...] (argv, no shell), levels = '
    f"{list(VISIBILITIES)!r} (default {list(DEFAULT_LEVELS)!r}) and timeout_s (seconds, > 0)"
)


@dataclass(frozen=True)
class Settings:
    command: tuple[str, ...]
    levels: tuple[str, ...] = DEFAULT_LEVELS
    timeout_s: float = DEFAULT_TIMEOUT_S


def settings() -> Settings | None:
    """`[notify]` of config.toml, checked; None when there is none."""
    table = config.get("notify")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise _invalid("[notify] must be a table")
    unknown = set(table) - {"command", "levels", "timeout_s"}
    if unknown:
        raise _invalid(f"[notify] has unknown keys {sorted(unknown)}")
    command = table.get("command")
    if not (isinstance(command, list) and command and all(isinstance(a, str) for a in command)):
        raise _invalid("[notify] command must be a non-empty list of strings")
    levels = table.get("levels", list(DEFAULT_LEVELS))
    if not (isinstance(levels, list) and levels and all(lv in VISIBILITIES for lv in levels)):
        raise _invalid(f"[notify] levels must be a non-empty list of {list(VISIBILITIES)}")
    timeout = table.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise _invalid("[notify] timeout_s must be a number of seconds above 0")
    return Settings(tuple(command), tuple(levels), float(timeout))


def _invalid(problem: str) -> UsageError:
    return UsageError(problem, kind="invalid_config", hint=HINT)


# -- the cursor ----------------------------------------------------------------------------------


def _tail(home: Home) -> Tail:
    """Where delivery goes on; a cursor that cannot be read starts again as a first one."""
    try:
        cursor = read_json(home.notify_cursor, None)
    except (OSError, ValueError):
        cursor = None
    seq, offset = (
        (cursor.get("delivered_seq"), cursor.get("offset"))
        if isinstance(cursor, dict)
        else (None, None)
    )
    if isinstance(seq, int) and isinstance(offset, int) and seq >= 0 and offset >= 0:
        return Tail(home, seq, offset)
    return Tail(home)  # a first cursor: old records are skipped (_due)


def _save(home: Home, seq: int, offset: int) -> None:
    write_json(home.notify_cursor, {"delivered_seq": seq, "offset": offset})


def _due(record: dict[str, Any], s: Settings, first: bool) -> bool:
    if record["visibility"] not in s.levels or record["source_event_kind"] == "notify_hook_failed":
        return False
    try:
        recent = clock.parse_iso(record["at"] or "").timestamp() >= clock.now_ts() - BACKLOG_S
    except ValueError:
        recent = False
    return not first or recent


def _first(home: Home) -> bool:
    try:
        return not isinstance(read_json(home.notify_cursor, None), dict)
    except (OSError, ValueError):
        return True


def pending(home: Home, s: Settings) -> list[dict[str, Any]]:
    """The records at the notify levels after the cursor (read-only)."""
    first = _first(home)
    return [r for r in _tail(home).poll() if _due(r, s, first)]


# -- 1. kick -------------------------------------------------------------------------------------


def kick(home: Home) -> None:
    """Start a detached delivery when a record waits for the hook, else move the cursor past what
    was read (so the next kick reads only what is new); never raises, never waits."""
    try:
        s = settings()
        if s is None:
            return
        lock = FileLock(home.notify_lock)
        try:
            lock.acquire(blocking=False)
        except LockBusy:
            return  # a delivery runs: it looks again after it releases (step 3)
        try:
            first = _first(home)
            tail = _tail(home)
            start = tail.offset
            due = any(_due(r, s, first) for r in tail.poll())
            if not due and (first or tail.offset - start >= CURSOR_STRIDE):
                _save(home, tail.since_seq, tail.offset)
        finally:
            lock.release()
        if due:
            groupcommit.barrier()  # what the hook is told of is durable first
            _spawn(home)
    except (HolonError, OSError, ValueError):
        return  # a broken [notify] or cursor is doctor's to report; the turn goes on


def _spawn(home: Home) -> None:
    # the directory holding the holon package: importable from a checkout too
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    subprocess.Popen(
        [sys.executable, "-m", "holon.feed.notify", str(home.root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=env,
    )


# -- 2. deliver ----------------------------------------------------------------------------------


def deliver(home: Home) -> int:
    """Run the hook for every pending record (module docstring); the number of runs."""
    ran = 0
    while True:
        lock = FileLock(home.notify_lock)
        try:
            lock.acquire(blocking=False)
        except LockBusy:
            return ran  # the holder looks again after it releases (step 3)
        try:
            s = settings()
            if s is None:
                return ran
            ran += _deliver_locked(home, s)
        finally:
            lock.release()
        if not pending(home, s):
            return ran


def _deliver_locked(home: Home, s: Settings) -> int:
    first = _first(home)
    tail = _tail(home)
    start = tail.offset
    records = tail.poll()
    ran = 0
    for record in records:
        if _due(record, s, first):
            run_hook(home, s, record)
            ran += 1
            # after the run: a crash before this write runs it again (the offset stays where the
            # batch began; the event_seq skips what was delivered)
            _save(home, record["event_seq"], start)
    _save(home, tail.since_seq, tail.offset)
    return ran


def run_hook(home: Home, s: Settings, record: dict[str, Any]) -> str | None:
    """Run the command with `record` on stdin; the problem (None when it exited 0), recorded as a
    notify_hook_failed event."""
    from holon.agent.handle import Agent
    from holon.sandbox import policy

    env = policy.command_env(dict(os.environ), policy.Policy(), home)
    env.pop("HOLON_SANDBOX", None)  # the hook runs outside the sandbox
    problem = _run(list(s.command), json.dumps(record, ensure_ascii=False) + "\n", env, s, home)
    if problem:
        Agent(home).event(
            "notify_hook_failed",
            record_seq=record["event_seq"],
            visibility=record["visibility"],
            command=s.command[0],
            problem=problem,
        )
    return problem


def _run(argv: list[str], data: str, env: dict[str, str], s: Settings, home: Home) -> str | None:
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(home.root),
            start_new_session=True,
        )
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc.strerror or exc}"
    try:
        _, err = proc.communicate(data.encode("utf-8"), timeout=s.timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return f"timed out after {s.timeout_s:g} s (stopped)"
    if proc.returncode == 0:
        return None
    tail = err.decode("utf-8", "replace").strip()[-STDERR_CHARS:]
    return f"exit status {proc.returncode}" + (f": {tail}" if tail else "")


def _stop(proc: subprocess.Popen) -> None:
    """TERM, then KILL, the hook's whole process group."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.communicate(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


if __name__ == "__main__":  # the detached delivery started by kick()
    deliver(Home(sys.argv[1]))

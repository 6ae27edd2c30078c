"""Start a tty command under its supervisor and follow it until it ends or its yield expires.

A tty command is a pexpect child of its detached supervisor from the first
byte (holon.tasks.command.ptytask), so nothing is handed over at promotion: the
caller (the tick) writes the TaskRecord, starts the supervisor, and reads
`output.log` until the command ends or `yield_time_ms` passes. Who reports the
end is settled under the task's handoff lock (holon.tasks.command.handoff): a command
that ended in time is reported inline as `Finished` and its task directory is
removed; otherwise the record is marked `promoted` and the supervisor admits
the task_result when it ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from typing import Any

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.ids import new_id
from holon.procs import alive
from holon.sandbox import confine
from holon.sandbox.policy import read as read_policy
from holon.store.atomic import write_bytes
from holon.tasks import store, tracking
from holon.tasks.command import handoff, spawn
from holon.tasks.command.outcome import CommandSpec, Finished, Promoted
from holon.tasks.results import output_text

POLL_S = 0.02
START_TIMEOUT_S = 30.0  # the supervisor reports its pid or an error long before this


def run(
    agent: Agent,
    spec: CommandSpec,
    *,
    parent_message_id: str | None,
    model_ref: str | None,
) -> Finished | Promoted:
    home = agent.home
    spawn.check_start(spec.workdir, spec.shell)
    refused = confine.refusal(read_policy(home))
    if refused:
        raise refused
    task_id = new_id("task")
    started = time.monotonic()
    store.make_scratch(home, task_id)
    tdir = home.task_dir(task_id)
    try:
        tdir.mkdir(parents=True)
        write_bytes(tdir / "output.log", b"", mode=0o600)
        record = store.new_record(
            home.agent_id,
            task_id,
            {
                **spec.metadata(),
                "output_path": str(tdir / "output.log"),
                "terminal_reentry": True,
            },
            parent_message_id=parent_message_id,
            wrapper_pid=0,
        )
        record["promoted"] = False
        record["starter_pid"] = os.getpid()
        if model_ref:
            record["model_ref"] = model_ref
        store.save(home, record)
        supervisor = spawn.launch_supervisor(home, task_id, "tty", [])
        record = _await_start(home, task_id, supervisor)
    except BaseException:
        _abandon(agent, task_id)
        raise
    return _follow(agent, spec, task_id, record, started)


def _await_start(home: Home, task_id: str, supervisor: int) -> dict[str, Any]:
    """The record once the supervisor has started the command (its pid is in it)."""
    end = time.monotonic() + START_TIMEOUT_S
    while True:
        error = handoff.read_spawn_error(home, task_id)
        if error:
            raise spawn.SpawnError(
                error.get("message", "could not start"), error.get("details", {})
            )
        record = store.load(home, task_id) or {}
        if record.get("pid"):
            return record
        if not alive(supervisor) or time.monotonic() > end:
            raise spawn.SpawnError(
                "the terminal supervisor ended before it started the command",
                {"supervisor_log": str(home.task_dir(task_id) / "supervisor.log")},
            )
        time.sleep(POLL_S)


def _follow(
    agent: Agent, spec: CommandSpec, task_id: str, record: dict[str, Any], started: float
) -> Finished | Promoted:
    home = agent.home
    deadline = started + spec.yield_ms / 1000
    try:
        while time.monotonic() < deadline:
            ended = handoff.read_ended(home, task_id)
            if ended is not None:
                return _inline(home, task_id, ended, started)
            if not alive(int(record.get("supervisor_pid") or 0)):
                break  # died without reporting: decided below, under the lock
            time.sleep(POLL_S)
        with handoff.held(home, task_id):
            ended = handoff.read_ended(home, task_id)
            if ended is None:
                record = store.load(home, task_id) or record
                record["promoted"] = True
                store.save(home, record)
                tracking.add(agent, task_id)  # under the lock: before the supervisor can finish
        if ended is not None:
            return _inline(home, task_id, ended, started)
    except BaseException:
        # interrupted while it ran: it goes on as a task, whose result will be admitted
        _promote_quietly(agent, task_id)
        raise
    output = output_text(home, task_id)
    return Promoted(record, output, int((time.monotonic() - started) * 1000))


def _abandon(agent: Agent, task_id: str) -> None:
    """The start failed or was interrupted: a command that runs already goes on as a task;
    otherwise nothing is left behind (a supervisor still starting is stopped first)."""
    home = agent.home
    supervisor = store.read_marker(home, task_id)
    if supervisor and not (store.load(home, task_id) or {}).get("pid") and alive(supervisor):
        try:
            os.kill(supervisor, signal.SIGKILL)
        except ProcessLookupError:
            pass
        time.sleep(POLL_S)
    pid = int((store.load(home, task_id) or {}).get("pid") or 0)
    if pid and alive(supervisor):
        _promote_quietly(agent, task_id)
        return
    if pid:
        spawn.kill_group(pid, grace=0.5)
    _discard(home, task_id)


def _promote_quietly(agent: Agent, task_id: str) -> None:
    home = agent.home
    try:
        with handoff.held(home, task_id):
            record = store.load(home, task_id)
            if record is not None and handoff.read_ended(home, task_id) is None:
                record["promoted"] = True
                store.save(home, record)
                tracking.add(agent, task_id)
    except Exception:  # noqa: BLE001 - the supervisor still sees the starter gone and reports
        pass


def _inline(home: Home, task_id: str, ended: dict[str, Any], started: float) -> Finished:
    """The command ended in time: report it here and leave no task behind."""
    end = time.monotonic() + 2.0
    while store.read_marker(home, task_id) and time.monotonic() < end:
        time.sleep(POLL_S)  # the supervisor clears its marker as it exits
    text = output_text(home, task_id)
    _discard(home, task_id)
    return Finished(
        ended.get("exit_status"),
        ended.get("signal"),
        text,
        "",
        int((time.monotonic() - started) * 1000),
    )


def _discard(home: Home, task_id: str) -> None:
    store.clear_active(home, task_id)
    store.remove_scratch(home, task_id)
    shutil.rmtree(home.task_dir(task_id), ignore_errors=True)

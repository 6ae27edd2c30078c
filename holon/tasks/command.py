"""Run one command: completed within its yield, promoted to a supervised command_task, or already
running."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon.agent import budget
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.ids import new_id
from holon.sandbox import confine
from holon.store.atomic import write_bytes
from holon.tasks import spawn, store

_DEFAULT_SHELL: str | None = None


def default_shell() -> str:
    global _DEFAULT_SHELL
    if _DEFAULT_SHELL is None:
        _DEFAULT_SHELL = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    return _DEFAULT_SHELL


@dataclass
class CommandSpec:
    cmd: str
    workdir: Path
    shell: str
    login: bool
    tty: bool
    accepts_input: bool
    yield_ms: int
    execution_root: Path  # the workspace: writable in the workspace-write sandbox

    @property
    def digest(self) -> str:
        return store.cmd_digest(self.cmd, str(self.workdir), self.shell, self.login, self.tty)

    def metadata(self) -> dict[str, Any]:
        return {
            "cmd": self.cmd,
            "cmd_digest": self.digest,
            "workdir": str(self.workdir),
            "shell": self.shell,
            "login": self.login,
            "tty": self.tty,
            "accepts_input": self.accepts_input,
        }


@dataclass
class Finished:
    exit_status: int | None
    signal: int | None
    stdout: str
    stderr: str
    duration_ms: int


@dataclass
class Promoted:
    task: dict[str, Any]
    initial_output: str
    duration_ms: int


def run(
    home: Home, spec: CommandSpec, *, promote: bool = True, parent_message_id: str | None = None
) -> Finished | Promoted:
    """Start the command and wait up to its yield; raises spawn.SpawnError when it cannot start.

    With promote=False (ExecCommandBatch) a command still running at its yield
    is stopped and reported with `exit_status=None` and `signal` set.
    """
    task_id = new_id("task")
    scratch = store.make_scratch(home, task_id)
    try:
        confinement = confine.prepare(
            home, execution_root=spec.execution_root, workdir=spec.workdir, scratch=scratch
        )
        run_ = spawn.start(
            spec.cmd,
            workdir=spec.workdir,
            shell=spec.shell,
            login=spec.login,
            tty=spec.tty,
            accepts_input=spec.accepts_input,
            exit_file=scratch / "exit_status",
            confinement=confinement,
        )
    except BaseException:
        store.remove_scratch(home, task_id)
        raise
    deadline = run_.started + spec.yield_ms / 1000
    if run_.stdin_fd is not None and not spec.tty and not promote:
        os.close(run_.stdin_fd)
    done = spawn.collect(run_, deadline)
    if not done and not promote:
        spawn.kill_group(run_.proc.pid, grace=0.5)
        spawn.collect(run_, time.monotonic() + 0.5)
        run_.proc.wait()
        done = True
    if done:
        store.remove_scratch(home, task_id)
        return _finished(run_)
    if run_.proc.poll() is not None:  # ended just now: no task needed
        spawn.collect(run_, time.monotonic() + 0.2)
        store.remove_scratch(home, task_id)
        return _finished(run_)
    home.task_dir(task_id).mkdir(parents=True, exist_ok=True)
    try:
        return _promote(home, spec, run_, task_id, parent_message_id)
    except BaseException:  # no supervisor will own it: stop the command, leave nothing behind
        spawn.kill_group(run_.proc.pid, grace=0.5)
        spawn.close(run_)
        store.remove_scratch(home, task_id)
        raise


def _finished(run_: spawn.Running) -> Finished:
    code = run_.proc.wait()
    spawn.close(run_)
    duration = int((time.monotonic() - run_.started) * 1000)
    if run_.tty:
        return Finished(
            code if code >= 0 else None, -code if code < 0 else None, run_.text(), "", duration
        )
    return Finished(
        code if code >= 0 else None,
        -code if code < 0 else None,
        run_.text("stdout"),
        run_.text("stderr"),
        duration,
    )


def _promote(
    home: Home, spec: CommandSpec, run_: spawn.Running, task_id: str, parent_message_id: str | None
) -> Promoted:
    tdir = home.task_dir(task_id)
    initial = b"".join(c for _, c in run_.chunks)
    write_bytes(tdir / "output.log", initial)
    command = {**spec.metadata(), "output_path": str(tdir / "output.log"), "terminal_reentry": True}
    record = store.new_record(
        home.agent_id,
        task_id,
        command,
        parent_message_id=parent_message_id,
        wrapper_pid=run_.proc.pid,
    )
    model_ref = budget.turn_model(Agent(home), parent_message_id)
    if model_ref:  # the task_result carries the model of the turn that started the task
        record["model_ref"] = model_ref
    store.save(home, record)
    sup_pid = spawn.start_supervisor(home, task_id, run_)
    record["supervisor_pid"] = sup_pid
    spawn.close(run_)
    run_.proc.returncode = 0  # the supervisor owns it now; keep Popen.__del__ from warning
    duration = int((time.monotonic() - run_.started) * 1000)
    return Promoted(record, initial.decode("utf-8", errors="replace"), duration)

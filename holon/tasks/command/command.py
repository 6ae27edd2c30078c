"""Run one command: completed within its yield, promoted to a supervised command_task, or already
running."""

from __future__ import annotations

import os
import shutil
import time

from holon.agent import budget, seal
from holon.agent.handle import Agent
from holon.ids import new_id
from holon.sandbox import confine
from holon.store import crashpoint
from holon.store.atomic import write_bytes
from holon.tasks import store, tracking
from holon.tasks.command import spawn
from holon.tasks.command.outcome import CommandSpec, Finished, Promoted

__all__ = ["CommandSpec", "Finished", "Promoted", "default_shell", "run"]

_DEFAULT_SHELL: str | None = None
_HANDED_OVER: list[int] = []  # wrapper pids of commands promoted by this process


def reap_handed_over() -> None:
    """Reap promoted commands that have ended: their wrapper stays this process's child, so a
    long-lived caller (`holon watch`) would otherwise keep one zombie per promoted task."""
    for pid in list(_HANDED_OVER):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _HANDED_OVER.remove(pid)


def default_shell() -> str:
    global _DEFAULT_SHELL
    if _DEFAULT_SHELL is None:
        _DEFAULT_SHELL = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"
    return _DEFAULT_SHELL


def run(
    agent: Agent, spec: CommandSpec, *, promote: bool = True, parent_message_id: str | None = None
) -> Finished | Promoted:
    """Start the command and wait up to its yield; raises spawn.SpawnError when it cannot start.

    With promote=False (ExecCommandBatch) a command still running at its yield
    is stopped and reported with `exit_status=None` and `signal` set. A tty
    command starts under its supervisor (holon.tasks.command.terminal).
    """
    home = agent.home
    reap_handed_over()
    if home.dot.is_dir():  # before the command: its mask then holds the key for good
        seal.ensure_key(home)
    if spec.tty:
        from holon.tasks.command import terminal

        model_ref = budget.turn_model(agent, parent_message_id)
        return terminal.run(agent, spec, parent_message_id=parent_message_id, model_ref=model_ref)
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
            accepts_input=spec.accepts_input,
            exit_file=scratch / "exit_status",
            confinement=confinement,
        )
    except BaseException:
        store.remove_scratch(home, task_id)
        raise
    deadline = run_.started + spec.yield_ms / 1000
    if run_.stdin_fd is not None and not promote:
        os.close(run_.stdin_fd)
    try:
        done = spawn.collect(run_, deadline)
    except BaseException:  # Ctrl-C or an error while the command runs in the foreground: it has
        spawn.kill_group(run_.proc.pid, grace=0.5)  # no record and no supervisor, so it stops
        spawn.close(run_)
        run_.proc.wait()
        store.remove_scratch(home, task_id)
        raise
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
        return _promote(agent, spec, run_, task_id, parent_message_id)
    except BaseException:  # no supervisor will own it: stop the command, leave nothing behind
        spawn.kill_group(run_.proc.pid, grace=0.5)
        spawn.close(run_)
        store.remove_scratch(home, task_id)
        if not store.read_marker(home, task_id):
            tracking.remove(agent, task_id)
            if (store.load(home, task_id) or {}).get("status") not in store.TERMINAL:
                shutil.rmtree(home.task_dir(task_id), ignore_errors=True)  # it never ran as one
        raise


def _finished(run_: spawn.Running) -> Finished:
    code = run_.proc.wait()
    spawn.close(run_)
    duration = int((time.monotonic() - run_.started) * 1000)
    return Finished(
        code if code >= 0 else None,
        -code if code < 0 else None,
        run_.text("stdout"),
        run_.text("stderr"),
        duration,
    )


def _promote(
    agent: Agent,
    spec: CommandSpec,
    run_: spawn.Running,
    task_id: str,
    parent_message_id: str | None,
) -> Promoted:
    """Make the running command a task. The record comes first, then its place in the active
    tasks: from there on a process killed part way leaves a `running` record that the next
    tick's recovery closes (it stops the command's group, holon.tasks.recovery); killed before
    the record is durable, the command is an orphan that recovery finds by its scratch exit
    file and stops. Then the output so far, then the supervisor."""
    crashpoint.step("task.promote")
    home = agent.home
    tdir = home.task_dir(task_id)
    initial = b"".join(c for _, c in run_.chunks)
    command = {**spec.metadata(), "output_path": str(tdir / "output.log"), "terminal_reentry": True}
    record = store.new_record(
        home.agent_id,
        task_id,
        command,
        parent_message_id=parent_message_id,
        wrapper_pid=run_.proc.pid,
    )
    model_ref = budget.turn_model(agent, parent_message_id)
    if model_ref:  # the task_result carries the model of the turn that started the task
        record["model_ref"] = model_ref
    store.save(home, record)
    tracking.add(agent, task_id)  # before the supervisor, which removes it when the task ends
    write_bytes(tdir / "output.log", initial)
    sup_pid = spawn.start_supervisor(home, task_id, run_)
    record["supervisor_pid"] = sup_pid
    spawn.close(run_)
    _HANDED_OVER.append(run_.proc.pid)  # still our child: reaped by reap_handed_over
    run_.proc.returncode = 0  # the supervisor owns it now; keep Popen.__del__ from warning
    duration = int((time.monotonic() - run_.started) * 1000)
    return Promoted(record, initial.decode("utf-8", errors="replace"), duration)

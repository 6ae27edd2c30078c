"""Task recovery at tick start: a task whose supervisor died is closed out and rejoins the queue.

The supervisor held the only reader of the command's output, so a command
that is still running cannot be reattached: its process group is stopped and
the task is marked `interrupted`. A command that already ended (its exit file
exists) keeps its exit status, but is still `interrupted` because output after
the supervisor's death was lost. Either way a failure artifact records what
was found and a task_result is admitted, so no task is silently lost. A
terminal record whose task_result was never admitted gets it now.
"""

from __future__ import annotations

from holon.agent.handle import Agent
from holon.procs import alive
from holon.tasks import results, spawn, store


def recover_tasks(agent: Agent) -> list[str]:
    home = agent.home
    recovered = []
    for task_id in store.active_ids(home):
        try:
            pid = int((home.tasks_active / task_id).read_text().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if alive(pid):
            continue
        if _recover_one(agent, task_id, pid):
            recovered.append(task_id)
    return recovered


def _recover_one(agent: Agent, task_id: str, supervisor_pid: int) -> bool:
    home = agent.home
    record = store.load(home, task_id)
    if record is None:
        store.clear_active(home, task_id)
        return False
    if record.get("status") in store.TERMINAL:  # supervisor died after the terminal write
        results.finish(
            home,
            record,
            record["status"],
            exit_status=record.get("exit_status"),
            signal=record.get("signal"),
        )
        return True
    tdir = home.task_dir(task_id)
    pid = int(record.get("pid") or 0)
    was_running = alive(pid)
    stopped = spawn.kill_group(pid, grace=1.0) if was_running else "not_running"
    exit_status = store.read_exit_status(tdir)
    failure = {
        "kind": "supervisor_lost",
        "task_id": task_id,
        "message": (
            "the task's supervisor process ended unexpectedly; output after that point was lost"
        ),
        "supervisor_pid": supervisor_pid,
        "command_pid": pid,
        "command_was_running": was_running,
        "command_stop": stopped,
        "exit_status": exit_status,
    }
    results.finish(home, record, "interrupted", exit_status=exit_status, failure=failure)
    agent.event(
        "task_recovered", task_id=task_id, status="interrupted", command_was_running=was_running
    )
    return True

"""Task recovery at tick start: a task whose supervisor died is closed out and rejoins the queue.

The supervisor held the only reader of the command's output (a pipe, or the
pty master of a tty command), so a command that is still running cannot be
reattached: its process group is stopped and, as the spec says of a task that
cannot be recovered, the task is marked `failed` (failure kind
`supervisor_lost`). A command that already ended (its exit file exists) keeps
its exit status, but is `failed` too because output after the supervisor's
death was lost. Either way a failure artifact records what was found and a
task_result is admitted, so no task is silently lost. A terminal record whose
task_result was never admitted gets it now. `AgentState.active_task_ids` is
then made to match the records (holon.tasks.tracking). A child_agent_task has no supervisor
process and is never `supervisor_lost`: holon.tasks.child.childend reconciles it with its child.

A pid is trusted only as far as it can be checked. Where /proc exists, a live
process counts as the task's supervisor only if its command line names the
task, and a command group is stopped only if its leader's command line names
the task's directory or a member runs for this home: after a restored commit,
a reboot or a long time, the pid in a marker may belong to someone else. A
record left `running` with no marker (a process that died while it promoted
the command) is lost too. A turn promotes only under the turn lock this
recovery holds, so the promoting turn is dead: the record is lost at once,
unless the supervisor that turn launched is still starting (its marker is then
awaited). An operator's `holon tool call` promotes without that lock, so its
record is lost only once older than a promotion takes. Every record is
checked when `tasks/` changed since the last check (`.holon/tasks.checked`),
so an idle agent with thousands of finished tasks reads none of them. A
command with no record at all (its promoter killed before the record was
durable) is found by its scratch exit file and stopped (`stop_orphans`).
"""

from __future__ import annotations

import os
import time

from holon import clock, jsonfile
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.procs import NO_PROC, group_leaders, group_members, proc_file, supervises
from holon.store.atomic import write_text
from holon.tasks import results, store, tracking
from holon.tasks.child import childend, children
from holon.tasks.command import spawn

PROMOTION_GRACE_S = 120.0  # an operator's unmarked running record may still be being promoted
SUPERVISOR_START_S = 10.0  # at most this long for a launched supervisor to write its marker


def recover_tasks(agent: Agent) -> list[str]:
    home = agent.home
    recovered = []
    for task_id in store.active_ids(home):
        pid = store.read_marker(home, task_id)
        if supervises(pid, task_id):
            continue
        if _recover_one(agent, task_id, pid):
            recovered.append(task_id)
    found = recovered + _recover_unmarked(agent)
    stop_orphans(agent)
    sweep_scratch(home)
    tracking.reconcile(agent)
    found += childend.reconcile(agent)
    return found


SCRATCH_GRACE_S = 3600.0  # longer than any command runs before it is promoted or ends


def stop_orphans(agent: Agent) -> list[str]:
    """Stop each command that runs with no task record, no marker and no live starter: a process
    killed while it promoted the command, before the record was durable, left it running with
    nobody to own it. It is found by its wrapper, whose command line names its scratch exit file
    (holon.tasks.command.spawn); one whose starter (its parent, a holon process) is alive is a
    command in the foreground, or being promoted, and is left alone. Lists /proc only for a scratch
    directory without a record."""
    home, stopped = agent.home, []
    try:
        names = [e.name for e in os.scandir(home.scratch) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return stopped
    active = set(store.active_ids(home)) if names else set()
    for task_id in names:
        if task_id in active or store.load(home, task_id) is not None:
            continue
        exit_file = os.fspath(home.scratch_dir(task_id) / "exit_status").encode()
        for pid, parent in group_leaders(exit_file):
            if parent > 1 and b"holon" in proc_file(parent, "cmdline"):
                break  # its starter runs: a foreground command, or one being promoted now
            outcome = spawn.kill_group(pid, grace=1.0)
            store.remove_scratch(home, task_id)
            agent.event("orphan_command_stopped", task_id=task_id, pid=pid, stop=outcome)
            stopped.append(task_id)
    return stopped


def sweep_scratch(home: Home) -> None:
    """Scratch directories that no live task owns and that are older than any command in flight:
    left by a tick killed while its command ran. Costs one listing of a (usually empty) dir."""
    try:
        entries = list(os.scandir(home.scratch))
    except OSError:
        return
    now = clock.now_ts()
    for entry in entries:
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > SCRATCH_GRACE_S
        except OSError:
            continue
        record = store.load(home, entry.name) if old else None
        if old and (record is None or record.get("status") in store.TERMINAL):
            store.remove_scratch(home, entry.name)


def command_alive(home: Home, task_id: str, pgid: int) -> bool:
    """Does process group `pgid` still run this task's command (not a stranger's reused pid)?"""
    if pgid <= 1 or not spawn.group_alive(pgid):
        return False
    members = group_members(pgid)
    if proc_file(os.getpid(), "cmdline") is NO_PROC:
        return True  # no /proc: the group is alive, and that is all that can be known
    dirs = (home.scratch_dir(task_id), home.task_dir(task_id))
    exit_files = [os.fspath(d).encode() for d in dirs]
    env = f"HOLON_AGENT_HOME={home.root}".encode()
    for pid in members:
        if pid == pgid and any(p in proc_file(pid, "cmdline") for p in exit_files):
            return True  # the wrapper shell names the task's exit file
        if env in proc_file(pid, "environ").split(b"\0"):
            return True
    return False


def _recover_one(agent: Agent, task_id: str, supervisor_pid: int) -> bool:
    home = agent.home
    record = store.load(home, task_id)
    if record is None:
        store.clear_active(home, task_id)
        store.remove_scratch(home, task_id)
        return False
    if record.get("status") in store.TERMINAL:  # supervisor died after the terminal write
        results.finish(
            agent,
            record,
            record["status"],
            exit_status=record.get("exit_status"),
            signal=record.get("signal"),
        )
        return True
    pid = int(record.get("pid") or 0)
    was_running = command_alive(home, task_id, pid)
    stopped = spawn.kill_group(pid, grace=1.0) if was_running else "not_running"
    exit_status = store.read_exit_status(home, task_id)
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
    results.finish(agent, record, "failed", exit_status=exit_status, failure=failure)
    agent.event("task_recovered", task_id=task_id, status="failed", command_was_running=was_running)
    return True


def _recover_unmarked(agent: Agent) -> list[str]:
    """Records still `running` that no marker names, checked when `tasks/` changed since the last
    check; the check is recorded only when nothing was left to look at again."""
    home = agent.home
    try:
        st = os.stat(home.tasks)
    except FileNotFoundError:
        return []
    seen = f"{st.st_ino} {st.st_mtime_ns}\n"
    try:
        if jsonfile.read_bytes(home.tasks_checked, 256) == seen.encode():
            return []
    except jsonfile.Unreadable:
        pass  # not a small regular file (never blocks on a FIFO): check, and rewrite it
    recovered, again = [], False
    active = set(store.active_ids(home))
    for entry in sorted(os.scandir(home.tasks), key=lambda e: e.name):
        if entry.name == "active" or entry.name in active or not entry.is_dir():
            continue
        record = store.load(home, entry.name)
        if not record or record.get("status") in store.TERMINAL:
            continue
        if record.get("kind") == children.KIND:  # no supervisor process: childend reconciles it
            continue
        supervisor = int(record.get("supervisor_pid") or 0)
        if supervises(supervisor, entry.name):
            again = True  # the marker was lost, not the supervisor: it still finishes the task
            continue
        if not supervisor and _being_promoted(home, record, entry.name):
            again = True  # perhaps being promoted right now: look again next tick
            continue
        if _recover_one(agent, entry.name, supervisor):
            recovered.append(entry.name)
    if not again:
        write_text(home.tasks_checked, seen)
    return recovered


def _being_promoted(home: Home, record: dict, task_id: str) -> bool:
    """Might the promotion of this unmarked `running` record still finish? A turn's cannot (its
    turn is dead: recovery holds the turn lock), except that the supervisor it launched may not
    have written its marker yet: that is awaited while its starter runs. An operator's may, for
    PROMOTION_GRACE_S."""
    if record.get("origin", "turn" if record.get("parent_message_id") else "operator") != "turn":
        return _younger_than(record, PROMOTION_GRACE_S)
    deadline = time.monotonic() + SUPERVISOR_START_S
    while time.monotonic() < deadline:
        if store.read_marker(home, task_id):
            return True
        starting = _starter_running(task_id)
        if starting is False or (starting is None and not _younger_than(record, 2.0)):
            break
        time.sleep(0.05)
    return bool(store.read_marker(home, task_id)) or _starter_running(task_id) is True


# the supervisor's module as its command line names it; the second is its name before it moved to
# holon/tasks/command/, which a supervisor started by an older holon still runs under
SUPERVISOR_NAMES = {b"holon.tasks.command.supervisor", b"holon.tasks.supervisor"}


def _starter_running(task_id: str) -> bool | None:
    """Is a `python -m holon.tasks.command.supervisor HOME TASK_ID` process alive? None without
    /proc."""
    try:
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return None
    needle = task_id.encode()
    for pid in pids:
        argv = proc_file(pid, "cmdline").split(b"\0")
        if needle in argv and SUPERVISOR_NAMES & set(argv):
            return True
    return False


def _younger_than(record: dict, seconds: float) -> bool:
    try:
        then = clock.parse_iso(str(record.get("updated_at") or record.get("created_at")))
    except ValueError:
        return False
    return clock.now_ts() - then.timestamp() < seconds

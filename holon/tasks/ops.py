"""Task inspection and control shared by the Task* tools and `holon task`: status, output, input,
stop, list."""

from __future__ import annotations

import os
import time
from typing import Any

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.ids import is_id
from holon.store.atomic import write_text
from holon.tasks import results, store
from holon.tasks.child import childend, children, childview
from holon.tasks.command import follow, inputchan, spawn
from holon.text import head_tail


class TaskNotFound(LookupError):
    pass


def get(home: Home, task_id: str) -> dict[str, Any]:
    if not is_id(task_id):  # not a plain file name: it names no task, and no path is built
        raise TaskNotFound(task_id)
    rec = store.load(home, task_id, strict=True)
    if rec is None:
        raise TaskNotFound(task_id)
    return rec


def snapshot(rec: dict[str, Any]) -> dict[str, Any]:
    """The compact lifecycle snapshot: no output bytes, no artifact arrays."""
    if rec["kind"] == children.KIND:
        return childview.snapshot(rec)
    cmd = rec["command"]
    return {
        "task_id": rec["id"],
        "kind": rec["kind"],
        "status": rec["status"],
        "summary": rec.get("summary"),
        "created_at": rec.get("created_at"),
        "updated_at": rec.get("updated_at"),
        "finished_at": rec.get("finished_at"),
        "exit_status": rec.get("exit_status"),
        "parent_message_id": rec.get("parent_message_id"),
        "origin": rec.get("origin") or ("turn" if rec.get("parent_message_id") else "operator"),
        "accepts_input": bool(cmd.get("accepts_input")),
        "input_target": ("tty" if cmd.get("tty") else "stdin")
        if cmd.get("accepts_input")
        else None,
        "command": {
            k: cmd.get(k)
            for k in (
                "cmd",
                "cmd_digest",
                "workdir",
                "shell",
                "login",
                "tty",
                "output_path",
                "terminal_reentry",
            )
        }
        | {"cmd_preview": store.preview(cmd["cmd"])},
    }


def status(home: Home, task_id: str) -> dict[str, Any]:
    return snapshot(get(home, task_id))


def list_tasks(home: Home, *, include_finished: bool = True) -> list[dict[str, Any]]:
    """Snapshots, oldest first, then a row for each corrupt task.json ({task_id, status:
    "corrupt", error: {kind: corrupt_state, message naming the file, hint}})."""
    bad: list[dict[str, Any]] = []
    recs = store.all_records(home, bad)
    rows = [snapshot(r) for r in recs if include_finished or r["status"] not in store.TERMINAL]
    return rows + bad


def output(
    home: Home, task_id: str, *, block: bool, timeout_ms: int, budget_chars: int
) -> dict[str, Any]:
    """TaskOutputResult {retrieval_status, task}. `success` needs a stable terminal snapshot: a
    terminal record plus its output file, or the output excerpt the terminal record keeps; a
    terminal status alone is not enough (spec: Command Task Output Contract)."""
    rec = get(home, task_id)
    if rec["kind"] == children.KIND:  # never blocks: the child runs in its own ticks
        return _child_output(rec, budget_chars=budget_chars)
    deadline = time.monotonic() + timeout_ms / 1000
    while block and rec["status"] not in store.TERMINAL and time.monotonic() < deadline:
        time.sleep(0.05)
        rec = get(home, task_id)
    terminal = rec["status"] in store.TERMINAL
    path = rec["command"].get("output_path")
    readable = bool(path) and os.path.isfile(path)
    if readable or not terminal:
        text = results.output_text(home, task_id)
    else:
        text = rec.get("output_summary") or ""
    preview, cut = head_tail(text, budget_chars)
    if not readable and terminal:
        cut = cut or bool(rec.get("output_summary_truncated"))
    artifacts = []
    if readable:
        artifacts.append({"path": path, "kind": "task_output", "bytes": os.path.getsize(path)})
    ready = terminal and (readable or "output_summary" in rec)
    task = _task_output(rec, preview, cut, artifacts)
    if ready:
        retrieval = "success"
    else:
        retrieval = "timeout" if block and not terminal else "not_ready"
    return {"retrieval_status": retrieval, "task": task}


def _child_output(rec: dict[str, Any], *, budget_chars: int) -> dict[str, Any]:
    """A child's output: its recent briefs (a running child's too), and the projection; a
    running child's is `not_ready` (its final report arrives as a task_result)."""
    preview, cut = head_tail(childview.output_text(rec), budget_chars)
    task = _task_output(rec, preview, cut, [])
    task["child_supervision"] = childview.projection(rec)
    retrieval = "success" if rec["status"] in store.TERMINAL else "not_ready"
    return {"retrieval_status": retrieval, "task": task}


def _task_output(
    rec: dict[str, Any], preview: str, cut: bool, artifacts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The `task` of a TaskOutputResult: one shape for command and child tasks."""
    terminal = rec["status"] in store.TERMINAL
    return {
        "task_id": rec["id"],
        "kind": rec["kind"],
        "status": rec["status"],
        "summary": rec.get("summary"),
        "output_preview": preview,
        "output_truncated": cut,
        "artifacts": artifacts,
        "output_artifact": 0 if artifacts else None,
        "result_summary": _result_summary(rec) if terminal else None,
        "exit_status": rec.get("exit_status"),
        "failure_artifact": rec.get("failure_artifact"),
    }


def _result_summary(rec: dict[str, Any]) -> str:
    if rec.get("exit_status") is not None:
        return f"{rec['status']} with exit status {rec['exit_status']}"
    return rec["status"]


def send_input(
    home: Home,
    task_id: str,
    data: str,
    *,
    eof: bool = False,
    expect: str | None = None,
    timeout_ms: int = 0,
    settle_ms: int = 500,
    budget_chars: int = 16000,
) -> dict[str, Any]:
    """TaskInputResult; a delivery that cannot happen is a receipt with accepted_input=false.

    With `timeout_ms` it then waits for what the task prints after the input
    (holon.tasks.command.follow): until `expect` matches, or the output has been quiet for
    `settle_ms`, or the task ends.
    """
    rec = get(home, task_id)
    if rec["kind"] == children.KIND:
        return _child_input(home, rec, data)
    target = (
        ("tty" if rec["command"].get("tty") else "stdin")
        if rec["command"].get("accepts_input")
        else None
    )

    def receipt(accepted: bool, n: int, text: str, **after: Any) -> dict[str, Any]:
        return _input_receipt(snapshot(rec), target, accepted, n, text, **after)

    if target is None:
        return receipt(
            False, 0, f"task {task_id} was not started with accepts_input or tty; it takes no input"
        )
    if rec["status"] in store.TERMINAL:
        return receipt(
            False, 0, f"task {task_id} is {rec['status']}; input can no longer be delivered"
        )
    tdir = home.task_dir(task_id)
    payload = data.encode("utf-8")
    offset = _size(tdir / "output.log")
    try:
        written, complete = inputchan.send(tdir / "stdin.fifo", payload, eof=eof)
    except inputchan.NoReader:
        return receipt(
            False, 0, f"task {task_id} has no live input channel (its supervisor is not reading)"
        )
    if not complete:
        return receipt(
            written > 0,
            written,
            f"input channel of {task_id} is full: wrote {written} of "
            f"{len(payload)} bytes; send the rest later",
        )
    sent = f"wrote {written} bytes" + (" and end of file" if eof else "")
    seen = follow.after(
        tdir / "output.log",
        offset,
        lambda: (store.load(home, task_id) or {}).get("status") in store.TERMINAL,
        expect=expect,
        timeout=timeout_ms / 1000,
        settle=settle_ms / 1000,
    )
    output, cut = head_tail(seen["output"], budget_chars)
    rec = get(home, task_id)
    waited = {
        "matched": "; the pattern matched",
        "settled": "; output settled",
        "timeout": f"; waited {timeout_ms} ms" + (" without a match" if expect is not None else ""),
        "task_ended": "; the task ended",
        "not_waited": "",
    }[seen["wait_outcome"]]
    return receipt(
        True,
        written,
        f"{sent} to the {target} of task {task_id}{waited}",
        eof_sent=eof,
        output=output,
        output_truncated=cut,
        wait_outcome=seen["wait_outcome"],
        matched=seen["matched"],
    )


def _child_input(home: Home, rec: dict[str, Any], data: str) -> dict[str, Any]:
    """TaskInput on a child: `data` becomes a message in the child's queue (as its parent's
    delegated instruction); the child's next tick runs it."""
    accepted = rec["status"] == "running" and rec.get("phase") == "running" and bool(data.strip())
    message_id = None
    if accepted:
        message_id = children.deliver(childview.child_agent(rec), rec, data)
        text = f"queued message {message_id} for child {rec['child_agent_id']}"
    elif not data.strip():
        text = "the input is empty; a child takes a message with text"
    else:
        text = f"task {rec['id']} is {rec['status']}; the child takes no more messages"
    written = len(data.encode("utf-8")) if accepted else 0
    task = snapshot(get(home, rec["id"]))
    return _input_receipt(task, "child_followup", accepted, written, text, message_id=message_id)


def _input_receipt(
    task: dict[str, Any], target: str | None, accepted: bool, n: int, text: str, **after: Any
) -> dict[str, Any]:
    """TaskInputResult: what was delivered to `target`, and (in `after`) what followed."""
    return {
        "task": task,
        "accepted_input": accepted,
        "input_target": target,
        "bytes_written": n,
        "eof_sent": False,
        "summary_text": text,
        "output": "",
        "output_truncated": False,
        "wait_outcome": "not_waited",
        "matched": None,
        **after,
    }


def _size(path: os.PathLike) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def stop(agent: Agent, task_id: str, *, grace_s: float = 2.0) -> dict[str, Any]:
    """TERM the task's process group, KILL after `grace_s`; the supervisor records `cancelled`."""
    home = agent.home
    rec = get(home, task_id)
    if rec["status"] in store.TERMINAL:
        return {
            "task": snapshot(rec),
            "stop_requested": False,
            "force_stop_requested": False,
            "summary_text": f"task {task_id} already {rec['status']}",
        }
    if rec["kind"] == children.KIND:
        rec = childend.stop(agent, rec)
        return {
            "task": snapshot(rec),
            "stop_requested": True,
            "force_stop_requested": False,
            "summary_text": f"task {task_id}: child {rec['child_agent_id']} stopped and archived; "
            f"status {rec['status']}",
        }
    write_text(home.task_dir(task_id) / "stop_requested", "1\n")
    how = spawn.kill_group(int(rec["pid"]), grace=grace_s)
    rec = _await_terminal(home, task_id, 3.0)
    return {
        "task": snapshot(rec),
        "stop_requested": True,
        "force_stop_requested": how == "killed",
        "summary_text": f"task {task_id}: process group {how}; status {rec['status']}",
    }


def _await_terminal(home: Home, task_id: str, seconds: float) -> dict[str, Any]:
    end = time.monotonic() + seconds
    rec = get(home, task_id)
    while rec["status"] not in store.TERMINAL and time.monotonic() < end:
        time.sleep(0.05)
        rec = get(home, task_id)
    return rec

"""What the console's overlays show, as plain text made safe for the terminal. Where a holon
command already renders a view (transcript, events, debug prompt, workspace, sandbox, status),
the overlay shows that command's own output (`holon … AGENT` in a subprocess, so there is one
rendering); tasks, children and agents are read here, for the overlays that act on them."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from holon.feed.present import present
from holon.home import registry
from holon.home.layout import Home
from holon.safetext import for_terminal, one_line
from holon.store import jsonl
from holon.tasks import ops as tasks

COMMAND_TIMEOUT_S = 60
OUTPUT_CHARS = 16_000
RECENT_EVENTS = 500  # events read for an agent's unread action_required count
# overlay name -> the holon commands whose output it shows ({agent}: the agent home's root)
COMMANDS: dict[str, list[list[str]]] = {
    "transcript": [["transcript", "{agent}", "--tail", "200"]],
    "events": [["events", "{agent}"]],
    "workspace": [
        ["workspace", "list", "{agent}"],
        ["sandbox", "show", "{agent}"],
        ["status", "{agent}"],
    ],
    "debug": [["debug", "prompt", "{agent}"]],
}


def command_text(home: Home, name: str, model: str | None = None) -> str:
    """The output of the overlay's commands for `home` (run side by side), each headed by its
    command line."""
    from concurrent.futures import ThreadPoolExecutor

    argvs, heads = [], []
    for args in COMMANDS[name]:
        argv = [a.format(agent=home.root) for a in args]
        if model and args[:2] == ["debug", "prompt"]:
            argv += ["--model", model]
        argvs.append(argv)
        heads.append(" ".join(["holon"] + [a.format(agent=home.agent_id) for a in args]))
    with ThreadPoolExecutor(len(argvs)) as pool:
        outputs = list(pool.map(run_holon, argvs))
    return "\n".join(f"$ {head}\n{out}" for head, out in zip(heads, outputs, strict=True))


def run_holon(argv: list[str]) -> str:
    """`holon ARGV`'s stdout (and its error lines), made safe for the terminal."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "holon", *argv],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=COMMAND_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"(no answer within {COMMAND_TIMEOUT_S} s)\n"
    text = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    # events.jsonl may be long: the overlay shows its end
    return for_terminal(text[-200_000:]) or "(nothing)\n"


def task_rows(home: Home) -> list[dict[str, Any]]:
    """The agent's tasks, newest first, as (task_id, label, accepts_input) rows."""
    rows = []
    for t in reversed(tasks.list_tasks(home)):
        if t["status"] == "corrupt":
            label = f"{t['task_id']}  corrupt  {t['error']['message']}"
        else:
            code = f" exit {t['exit_status']}" if t.get("exit_status") is not None else ""
            what = (
                t["command"]["cmd_preview"]
                if "command" in t
                else f"child {t.get('child_agent_id')}: {t.get('summary') or ''}"
            )
            label = f"{t['task_id']}  {t['status']}{code}  {what}"
        rows.append(
            {
                "task_id": t["task_id"],
                "label": one_line(label),
                "accepts_input": bool(t.get("accepts_input")),
                "child": t.get("kind") == "child_agent_task",
            }
        )
    return rows


def task_output(home: Home, task_id: str) -> str:
    """The task's output so far (a child's recent briefs), safe for the terminal."""
    try:
        res = tasks.output(home, task_id, block=False, timeout_ms=0, budget_chars=OUTPUT_CHARS)
    except tasks.TaskNotFound:
        return f"no task {task_id}"
    task = res["task"]
    head = f"{task_id}: {task.get('status')} ({res['retrieval_status']})\n"
    return for_terminal(head + str(task.get("output_preview") or ""))


def send_input(home: Home, task_id: str, text: str) -> str:
    """Send a line to an interactive task (or a follow-up to a running child): the receipt."""
    try:
        res = tasks.send_input(home, task_id, text + "\n", timeout_ms=1000)
    except tasks.TaskNotFound:
        return f"no task {task_id}"
    receipt = str(res.get("summary_text") or "")
    if not res.get("accepted_input"):
        return for_terminal(f"input refused: {receipt}")
    return for_terminal(receipt + ("\n" + res["output"] if res.get("output") else ""))


def agent_rows(current: str) -> list[dict[str, Any]]:
    """The registered agents with their unread action_required count (records after the last
    operator message, as `holon doctor` counts them)."""
    from holon.ops.attention import unanswered

    rows = []
    for home in registry.all_homes():
        try:
            records = [present(e) for e in jsonl.tail(home.events, RECENT_EVENTS)]
        except OSError:
            records = []
        asks = len(unanswered(records))
        mark = "*" if home.agent_id == current else " "
        note = f"  {asks} action required" if asks else ""
        rows.append({"agent_id": home.agent_id, "label": one_line(f"{mark} {home.agent_id}{note}")})
    return rows


def children_text(home: Home) -> str:
    """The agent's child agents: each child task with its state and latest report."""
    lines = []
    for row in task_rows(home):
        if row["child"]:
            lines.append(row["label"])
    return "\n".join(lines) or "no child agents"

"""Working memory: a small, structured record of where the agent stands, derived after every
settled turn from work items, plans, briefs, tool evidence, waiting state and tasks.

It is deterministic (same inputs, same record), versioned by a revision that moves only when
the rendering changes, and shown to the model as a delta against what the model last saw.
Agent-scoped memory files (memory/self.md, memory/operator.md) are read here too, bounded.
"""

from __future__ import annotations

from typing import Any

from holon import confined
from holon.agent import workitems
from holon.agent.handle import Agent
from holon.context.evidence import command_line
from holon.home.layout import Home
from holon.model.records import AgentState, WorkingMemory
from holon.text import shorten

RECENT_FILES = 12
RECENT_COMMANDS = 8
RECENT_VERIFICATION = 4
OPEN_CHECKLIST_ITEMS = 8  # of the active work item's unfinished todo_list
OPEN_WORK = 5
DELTA_LINES = 40
MEMORY_FILE_CHARS = 8_000  # each of memory/self.md and memory/operator.md, about 2k tokens
MEMORY_FILE_BYTES = 1 << 20  # read of each: a larger one is shown cut, as a long one is
MEMORY_FILES = (("self", "self.md"), ("operator", "operator.md"))


def derive(agent: Agent, state: AgentState, evidence: dict[str, Any]) -> dict[str, Any]:
    """The working-memory record after a settled turn: the previous record, advanced by this
    turn's evidence and the agent's current work, waiting and task state."""
    prev = state.working_memory.current
    items = workitems.load_all(agent.home)
    current = items.get(state.current_work_item_id or "")
    active = None
    if current and current.get("state") == "open":
        todos = [
            str(t.get("text") or "")
            for t in current.get("todo_list") or []
            if isinstance(t, dict) and t.get("state") != "completed"
        ]
        active = {
            "id": current["id"],
            "objective": shorten(str(current.get("objective", "")), 200),
            "plan_status": current.get("plan_status"),
            "open_todos": [shorten(str(t), 120) for t in todos[:OPEN_CHECKLIST_ITEMS]],
        }
    others = [
        f"{r['id']} {shorten(str(r.get('objective', '')), 100)}"
        for r in items.values()
        if r.get("state") == "open" and r["id"] != (active or {}).get("id")
    ]
    files = _recent(prev.get("files", []), evidence.get("files", []), RECENT_FILES)
    commands = (prev.get("commands", []) + evidence.get("commands", []))[-RECENT_COMMANDS:]
    verification = (prev.get("verification", []) + evidence.get("verification", []))[
        -RECENT_VERIFICATION:
    ]
    return {
        "active_work": active,
        "open_work_items": others[:OPEN_WORK],
        "more_open_work_items": max(0, len(others) - OPEN_WORK),
        "last_result": evidence.get("replied") or prev.get("last_result", ""),
        "files": files,
        "commands": commands,
        "verification": verification,
        "waiting": waiting(state),
        "tasks": list(state.active_task_ids),
    }


def _recent(old: list[str], new: list[str], n: int) -> list[str]:
    merged = [f for f in old if f not in new] + list(new)
    return merged[-n:]


def waiting(state: AgentState) -> str | None:
    if state.status.value == "asleep":
        return f"asleep until {state.sleeping_until}" if state.sleeping_until else "asleep"
    if state.status.value == "awaiting_task":
        return "waiting for tasks: " + ", ".join(state.active_task_ids)
    return None


def render(current: dict[str, Any]) -> list[str]:
    """Working memory as prompt lines, one fact per line (the delta compares lines)."""
    lines: list[str] = []
    active = current.get("active_work")
    if active:
        lines.append(
            f"active work: {active['id']} [{active.get('plan_status')}] {active['objective']}"
        )
        lines += [f"open todo: {t}" for t in active.get("open_todos", [])]
    else:
        lines.append("active work: none")
    lines += [f"open work item: {w}" for w in current.get("open_work_items", [])]
    if current.get("more_open_work_items"):
        lines.append(f"more open work items: {current['more_open_work_items']}")
    if current.get("last_result"):
        lines.append(f"last result: {current['last_result']}")
    if current.get("files"):
        lines.append("files touched recently: " + ", ".join(current["files"]))
    lines += [f"command: {command_line(c)}" for c in current.get("commands", [])]
    lines += [f"verification: {command_line(c)}" for c in current.get("verification", [])]
    if current.get("waiting"):
        lines.append(f"waiting: {current['waiting']}")
    if current.get("tasks"):
        lines.append("active tasks: " + ", ".join(current["tasks"]))
    return lines


def delta(before: list[str], after: list[str]) -> list[str]:
    """What changed from `before` to `after`: added lines as `+`, dropped lines as `-`."""
    old, new = set(before), set(after)
    out = [f"- {line}" for line in before if line not in new]
    out += [f"+ {line}" for line in after if line not in old]
    if len(out) > DELTA_LINES:
        out = out[:DELTA_LINES] + [f"… {len(out) - DELTA_LINES} more changes"]
    return out


def advance(wm: WorkingMemory, current: dict[str, Any]) -> None:
    """Store a newly derived record; the revision moves only when the rendering changed."""
    if render(current) != render(wm.current) or not wm.revision:
        wm.revision += 1
    wm.current = current
    wm.pending_delta = delta(wm.last_prompted, render(current))


def mark_prompted(wm: WorkingMemory) -> list[str]:
    """Hand the pending delta to a prompt: returns it and moves the prompted base forward."""
    lines = delta(wm.last_prompted, render(wm.current))
    wm.last_prompted = render(wm.current)
    wm.last_prompted_revision = wm.revision
    wm.pending_delta = []
    return lines


def memory_files(
    home: Home, refused: list[confined.Refused] | None = None
) -> list[tuple[str, str, str]]:
    """(name, path, bounded text) of the agent-scoped memory files that exist and are not
    empty. Read beneath the agent home (holon.confined): one that is a symlink out of it, not a
    regular file or unreadable is left out and, given `refused`, appended to it."""
    out = []
    for name, filename in MEMORY_FILES:
        path = home.memory / filename
        try:
            found = confined.read(home.root, f"memory/{filename}", MEMORY_FILE_BYTES, truncate=True)
        except confined.Refused as exc:
            if refused is not None:
                refused.append(exc)
            continue
        text = found.text.strip() if found else ""
        if not text:
            continue
        if len(text) > MEMORY_FILE_CHARS or found.truncated:
            cut = f"{len(text) - MEMORY_FILE_CHARS}{'+' if found.truncated else ''}"
            text = (
                text[:MEMORY_FILE_CHARS].rstrip()
                + f"\n[… {cut} more characters in memory/{filename} not shown; read the file]"
            )
        out.append((name, str(path), text))
    return out

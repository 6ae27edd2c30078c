"""What a parent sees of a private child: the `child_supervision` projection (one shape in
SpawnAgent, TaskStatus, TaskOutput, AgentGet and `holon status`), the task snapshot, and the
child's recent briefs as the task's output."""

from __future__ import annotations

from typing import Any

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.home import stateview
from holon.home.layout import Home, is_home
from holon.store import jsonl
from holon.tasks.child import childws
from holon.text import head_tail

LAST_BRIEF_CHARS = 600
OUTPUT_BRIEFS = 20


def child_home(record: dict[str, Any]) -> Home:
    return Home(record["child_home"], record["child_agent_id"])


def child_agent(record: dict[str, Any]) -> Agent:
    """The child's own handle (another agent than the one the record belongs to)."""
    return Agent(child_home(record))


def projection(record: dict[str, Any], *, status: str | None = None) -> dict[str, Any]:
    """ChildSupervision: the compact observability snapshot of one child."""
    home = child_home(record)
    binding = dict(record.get("workspace") or {})
    tree = record.get("worktree")
    out: dict[str, Any] = {
        "child_agent_id": record["child_agent_id"],
        "supervision_task_id": record["id"],
        "parent_agent_id": record.get("agent_id"),
        "cleanup_owner": "supervision_task",
        "followup_target": "parent_supervisor",
        "workspace_mode": record.get("workspace_mode"),
        "status": status or record["status"],
        "child_status": "missing",
        "turns": 0,
        "pending_messages": 0,
        "last_brief": None,
        "last_activity_at": None,
        "workspace": {
            "workspace_id": binding.get("workspace_id"),
            "execution_root": (tree or {}).get("path") or binding.get("execution_root"),
            "worktree": {
                "path": tree.get("path"),
                "branch": tree.get("branch"),
                "changed_files": childws.changed_files(record),
            }
            if tree
            else None,
        },
        "tokens": {"input": 0, "output": 0},
        "child_observability": _observability(None, None, [], terminal=True),
    }
    if not is_home(home.root):
        return out
    agent = Agent(home)
    state = stateview.current(home) or agent.state().model_dump(mode="json")
    brief = jsonl.tail(home.briefs, 1)
    archived = bool(agent.identity().get("archived_at"))
    out.update(
        child_status="archived" if archived else state["status"],
        turns=state["turn_index"],
        pending_messages=home.queue.depth(),
        last_brief=head_tail(brief[-1].get("text") or "", LAST_BRIEF_CHARS)[0] if brief else None,
        last_activity_at=max(
            filter(None, [state["last_tick_at"], state["last_brief_at"]]), default=None
        ),
        tokens={"input": state["total_input_tokens"], "output": state["total_output_tokens"]},
        child_observability=_observability(
            home,
            state,
            jsonl.tail(home.briefs, OUTPUT_BRIEFS),
            terminal=archived or (status or record["status"]) != "running",
        ),
    )
    return out


def _observability(
    home: Home | None, state: dict[str, Any] | None, briefs: list[dict[str, Any]], *, terminal: bool
) -> dict[str, Any]:
    """The spec's child observability contract: phase (running, blocked, waiting, terminal), the
    task-plane blocking reason or the waiting posture, the work in focus, and the latest
    progress (ack) and result (result, failure) briefs."""
    closure = (state or {}).get("closure") or {}
    waiting = closure.get("waiting_reason") if closure.get("outcome") == "waiting" else None
    tasks = list((state or {}).get("active_task_ids") or [])
    blocked = "awaiting_task_result" if tasks or waiting == "awaiting_task_result" else None
    phase = (
        "terminal" if terminal else "blocked" if blocked else "waiting" if waiting else "running"
    )
    item_id = (state or {}).get("current_work_item_id")
    item = workitems.get(home, item_id) if home is not None and item_id else None

    def last(kinds: tuple[str, ...]) -> str | None:
        found = [b for b in briefs if b.get("kind") in kinds]
        return head_tail(found[-1].get("text") or "", LAST_BRIEF_CHARS)[0] if found else None

    return {
        "phase": phase,
        "blocked_reason": None if terminal else blocked,
        "waiting_reason": None if terminal or blocked else waiting,
        "active_work_item_id": item_id,
        "work_summary": (item or {}).get("objective"),
        "last_progress_brief": last(("ack",)),
        "last_result_brief": last(("result", "failure")),
    }


def snapshot(record: dict[str, Any]) -> dict[str, Any]:
    """The task snapshot of a child_agent_task (what TaskStatus and TaskList show)."""
    running = record["status"] == "running"
    return {
        "task_id": record["id"],
        "kind": record["kind"],
        "status": record["status"],
        "summary": record.get("summary"),
        "label": record.get("label"),
        "created_at": record.get("created_at"),
        "updated_at": record.get("updated_at"),
        "finished_at": record.get("finished_at"),
        "exit_status": None,
        "parent_message_id": record.get("parent_message_id"),
        "origin": record.get("origin") or "turn",
        "accepts_input": running,
        "input_target": "child_followup" if running else None,
        "workspace_mode": record.get("workspace_mode"),
        "child_agent_id": record["child_agent_id"],
        "child_observability": (sup := projection(record))["child_observability"],
        "child_supervision": sup,
    }


def output_text(record: dict[str, Any]) -> str:
    """The child's recent briefs, oldest first: what it reported, turn by turn."""
    home = child_home(record)
    if not is_home(home.root):
        return record.get("output_summary") or ""
    parts = []
    for brief in jsonl.tail(home.briefs, OUTPUT_BRIEFS):
        head = f"[{brief.get('kind', 'brief')} {brief.get('created_at', '')}]"
        parts.append(f"{head}\n{(brief.get('text') or '').rstrip()}")
    return "\n\n".join(parts)

"""The turn-scoped context: written once when a turn begins, right after its message, and kept in
the transcript so later rounds and turns extend the prompt append-only.

It holds what changes from turn to turn: the time, the agent's status and working directory, an
active external trigger, the work queue, what changed in working memory since the model last saw
it, and a memory file edited since (holon.context.memoryfiles).
"""

from __future__ import annotations

from pathlib import Path

from holon import clock
from holon.agent.handle import Agent
from holon.prompt import workqueue
from holon.store.atomic import read_json


def text(
    agent: Agent,
    *,
    execution_root: Path,
    cwd: Path,
    memory_delta: list[str],
    revision: int,
    memory_edits: list[str] | None = None,
) -> str:
    state = agent.state()
    lines = [
        "# Turn context",
        f"Current time: {clock.now_iso()}",
        f"Status: {state.status.value}",
        f"Execution root: {execution_root}",
        f"Working directory: {cwd}",
    ]
    trigger = read_json(agent.home.trigger_descriptor)
    if trigger and trigger.get("status") == "active":
        lines.append(
            f"External trigger: {trigger['external_trigger_id']} active (wake_hint); its token is "
            "a capability secret held by your operator, never repeat or store it"
        )
    if memory_delta:
        lines += ["", f"## Working memory (revision {revision}), changes since you last saw it"]
        lines += memory_delta
    lines += memory_edits or []
    work = workqueue.projection(agent)
    if work:
        lines += ["", work]
    return "\n".join(lines)

"""Task records on disk: `.holon/tasks/<task_id>/task.json`, `.holon/tasks/active/<task_id>` markers."""

from __future__ import annotations

from holon.runtime.agent import Agent


def recover_orphans(agent: Agent) -> list[str]:
    active = agent.home.tasks / "active"
    try:
        markers = [p.name for p in active.iterdir()]
    except FileNotFoundError:
        return []
    if not markers:
        return []
    from holon.tasks import supervise_recovery

    return supervise_recovery.recover(agent, markers)

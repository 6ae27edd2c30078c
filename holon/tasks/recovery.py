"""Task recovery at tick start: a task whose supervisor died is marked interrupted and rejoins."""

from __future__ import annotations

from holon.runtime.agent import Agent


def recover_tasks(agent: Agent) -> list[str]:
    from holon.tasks import store

    return store.recover_orphans(agent)

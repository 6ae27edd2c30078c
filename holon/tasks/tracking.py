"""`AgentState.active_task_ids`: the agent's tasks that have not ended, kept true at every
transition.

A task joins the list once its running record is saved (promotion) and leaves
it just before its task_result is admitted, so the turn that result wakes no
longer waits on it. A crash between a record write and the state write is
repaired at the next busy tick by `reconcile`, which rebuilds the list from
the task records the active markers name (and the ids already listed). The
closure (`awaiting_task_result`), the end-of-turn blocker commit and the
work-queue projection read the list; the closure waits only on the `awaited` ones (a child
agent's supervision task is listed but runs in the background).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tasks import store

if TYPE_CHECKING:
    from holon.model.records import AgentState


def add(agent: Agent, task_id: str) -> None:
    def change(s: AgentState) -> None:
        if task_id not in s.active_task_ids:
            s.active_task_ids = [*s.active_task_ids, task_id]

    agent.update_state(change)


def remove(agent: Agent, task_id: str) -> None:
    if task_id not in agent.state().active_task_ids:
        return

    def change(s: AgentState) -> None:
        s.active_task_ids = [t for t in s.active_task_ids if t != task_id]

    agent.update_state(change)


def live(home: Home, candidates: list[str]) -> list[str]:
    """The ids among `candidates` and the active markers whose records have not ended (a tty
    command its starter may still report inline is not a task yet)."""
    out = []
    for task_id in dict.fromkeys([*candidates, *store.active_ids(home)]):
        record = store.load(home, task_id)
        if record is None or record.get("status") in store.TERMINAL:
            continue
        if record.get("promoted") is not False:
            out.append(task_id)
    return out


def awaited(home: Home, task_ids: list[str]) -> list[str]:
    """The tasks among `task_ids` a turn waits for: not a child_agent_task, which runs in the
    background (the spec: parent-supervised is not AwaitingTask); its result wakes the parent."""
    out = []
    for task_id in task_ids:
        record = store.load(home, task_id)
        if record is None or record.get("kind") != "child_agent_task":
            out.append(task_id)
    return out


def reconcile(agent: Agent) -> list[str]:
    """Make the list match the task records (after a crash); returns it."""
    found = live(agent.home, list(agent.state().active_task_ids))
    if found != list(agent.state().active_task_ids):

        def change(s: AgentState) -> None:
            s.active_task_ids = live(agent.home, list(s.active_task_ids))

        agent.update_state(change)
    return list(agent.state().active_task_ids)

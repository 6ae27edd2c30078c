"""`holon workspace list|use|detach AGENT`: the operator's side of the execution binding
(holon.agent.workspaces). Changes take the agent's turn lock without waiting, so they never race
a running turn: a busy agent is refused with the `busy` error."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holon.agent import workspaces
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.store.locks import FileLock


@contextmanager
def _turn_held(home: Home) -> Iterator[Agent]:
    agent = Agent(home).ensure()  # makes the locks directory of a fresh clone
    lock = FileLock(home.turn_lock)
    lock.acquire(blocking=False)  # LockBusy: the CLI reports `busy`
    try:
        yield agent
    finally:
        lock.release()


def listing(home: Home) -> dict[str, Any]:
    return {"agent_id": home.agent_id, **workspaces.listing(Agent(home))}


def use(
    home: Home,
    *,
    path: Path | None = None,
    workspace_id: str | None = None,
    isolated: bool = False,
    label: str | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """Bind AGENT to a directory or an attached workspace; the new binding."""
    with _turn_held(home) as agent:
        bound = workspaces.use(
            agent,
            path=None if path is None else str(path.absolute()),
            workspace=workspace_id,
            mode="isolated" if isolated else "direct",
            cwd=cwd,
            label=label,
            base=Path.cwd(),
        )
        agent.event("workspace_used", source="operator", **bound)
    return bound


def detach(home: Home, workspace_id: str) -> dict[str, Any]:
    with _turn_held(home) as agent:
        out = workspaces.detach(agent, workspace_id)
        agent.event("workspace_detached", source="operator", workspace_id=workspace_id)
    return out


def bind_for_run(home: Home, path: Path) -> dict[str, Any]:
    """`holon run --workspace PATH`: bind before the turn (direct mode)."""
    return use(home, path=path)

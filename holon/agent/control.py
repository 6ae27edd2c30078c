"""Lifecycle control: pause, resume, stop, wake — durable state changes with audit events."""

from __future__ import annotations

from typing import Any

from holon.agent import nextdue
from holon.agent.handle import Agent
from holon.errors import NotRunnable
from holon.home.layout import Home
from holon.model.records import AgentStatus


def _change(home: Home, action: str, fn) -> dict[str, Any]:
    agent = Agent(home)
    before: dict[str, str] = {}

    def apply(s: Any) -> None:
        before["status"] = s.status.value
        fn(s)

    state = agent.update_state(apply)
    agent.event(f"agent_{action}", previous_status=before["status"], status=state.status.value)
    nextdue.refresh(home)  # a continuable closure is due only while the agent is awake
    return {
        "agent_id": home.agent_id,
        "previous_status": before["status"],
        "status": state.status.value,
        "queue_depth": home.queue.depth(),
    }


def pause(home: Home) -> dict[str, Any]:
    def fn(s: Any) -> None:
        if s.status == AgentStatus.stopped:
            raise NotRunnable(
                f"agent {home.agent_id} is stopped",
                kind="agent_stopped",
                hint=f"run `holon resume {home.agent_id}` first",
            )
        if s.status != AgentStatus.paused:
            s.paused_from = s.status.value
            s.status = AgentStatus.paused

    return _change(home, "paused", fn)


def resume(home: Home) -> dict[str, Any]:
    def fn(s: Any) -> None:
        if s.status in (AgentStatus.paused, AgentStatus.stopped):
            s.status = (
                AgentStatus.asleep
                if s.paused_from == "asleep" and s.status == AgentStatus.paused
                else AgentStatus.awake_idle
            )
            s.paused_from = None

    return _change(home, "resumed", fn)


def stop(home: Home) -> dict[str, Any]:
    def fn(s: Any) -> None:
        s.status = AgentStatus.stopped
        s.paused_from = None

    return _change(home, "stopped", fn)


def wake(home: Home) -> dict[str, Any]:
    def fn(s: Any) -> None:
        if s.status == AgentStatus.stopped:
            raise NotRunnable(
                f"agent {home.agent_id} is stopped; wake does not cross the stopped boundary",
                kind="agent_stopped",
                hint=f"run `holon resume {home.agent_id}` instead",
            )
        if s.status == AgentStatus.paused:
            raise NotRunnable(
                f"agent {home.agent_id} is paused",
                kind="agent_paused",
                hint=f"run `holon resume {home.agent_id}` instead",
            )
        if s.status == AgentStatus.asleep:
            s.status = AgentStatus.awake_idle
            s.sleeping_until = None

    return _change(home, "woken", fn)

"""Pending wake hints (`.holon/wake_hint.json`) become one coalesced system tick when eligible."""

from __future__ import annotations

from holon.runtime.agent import Agent


def convert(agent: Agent) -> list[str]:
    if not agent.home.wake_hint.exists():
        return []
    from holon.runtime import wake_convert

    return wake_convert.convert(agent)

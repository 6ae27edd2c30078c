"""`holon tool call`: one built-in tool, run for an agent outside a turn, in its
current execution context.

The call is the one a turn would make (holon.runtime.turn.context.tool_context),
and its effects are applied as a settled turn would apply them, so a Sleep
with a duration still sets its timer. There is no turn, so no brief or closure.
"""

from __future__ import annotations

from typing import Any

from holon.agent import nextdue
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.runtime.turn.context import tool_context
from holon.runtime.turn.settle import apply_effects
from holon.tools import registry
from holon.tools.base import CallOutcome


def call(home: Home, name: str, arguments: dict[str, Any]) -> CallOutcome:
    agent = Agent(home).ensure()
    outcome = registry.call(tool_context(agent), name, arguments)
    if outcome.effects is not None:
        apply_effects(agent, outcome.effects)
    nextdue.refresh(home)
    return outcome

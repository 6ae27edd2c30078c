"""The turn loop's own stops: a round limit, a spent token budget, an exhausted script.

None of them is a provider failure (mini-swe-agent's `LimitsExceeded`): the loop raises them (or
converts what a lower layer raised: `holon.agent.budget.Exhausted`,
`holon.providers.scripted.Exhausted`) and settles the turn as failed; its message is done, never
deferred or dead-lettered. Each carries what the failure records say (kind, message,
diagnostics) and the round's attempt timeline, if any.
"""

from __future__ import annotations

from typing import Any


class TurnStop(Exception):
    """The turn stops before its model finished; settle records it as a runtime failure."""

    kind = "turn_stopped"
    category = "runtime"
    status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        diagnostics: dict[str, Any] | None = None,
        timeline: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics = diagnostics or {}
        self.timeline = timeline


class RoundLimit(TurnStop):
    kind = "max_rounds_exceeded"


class BudgetExhausted(TurnStop):
    kind = "budget_exhausted"


class ScriptExhausted(TurnStop):
    kind = "script_exhausted"

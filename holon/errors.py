"""The one exception tree of holon.

    HolonError                      kind, message, hint, exit_code (1)
    ├── UsageError                  bad input or usage (exit 2)
    │   ├── InvalidInput            malformed JSON, bad UTF-8, oversize body ...
    │   └── UnknownAgent            no agent with that id or path
    ├── NotRunnable                 the agent is stopped or paused (exit 3)
    ├── AlreadyExists               refuses to overwrite (exit 2)
    └── OperationFailed             the operation ran and failed (exit 1)

The CLI turns any HolonError into `holon: <kind>: <message>` plus a
`hint: ...` line on stderr and exits with `exit_code`.
"""

from __future__ import annotations


class HolonError(Exception):
    """Base of every error holon reports to a user."""

    kind = "error"
    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        kind: str | None = None,
        hint: str | None = None,
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "hint": self.hint}


class UsageError(HolonError):
    kind = "usage"
    exit_code = 2


class InvalidInput(UsageError):
    kind = "invalid_input"


class UnknownAgent(UsageError):
    kind = "unknown_agent"


class AlreadyExists(UsageError):
    kind = "already_exists"


class NotRunnable(HolonError):
    kind = "agent_not_runnable"
    exit_code = 3


class OperationFailed(HolonError):
    kind = "operation_failed"
    exit_code = 1

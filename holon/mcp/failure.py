"""The three ways an MCP server fails a tick, each a stable tool error kind."""

from __future__ import annotations

from typing import Any

UNAVAILABLE = "mcp_server_unavailable"  # cannot start, crashed, refused by the sandbox
TIMEOUT = "tool_timeout"  # no answer within tool_timeout_s (the server is stopped)
INVALID = "invalid_mcp_response"  # something that is not an MCP message, or too large
HINTS = {
    UNAVAILABLE: "check the server with `holon mcp list` and `holon doctor`; go on without it",
    TIMEOUT: "the server was stopped; retry once with smaller input, or go on without it",
    INVALID: "the server is broken; go on without it and tell the operator",
}


class McpFailure(Exception):
    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind, self.message, self.details = kind, message, details or {}

    def to_record(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "details": self.details}

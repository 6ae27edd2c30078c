"""`holon mcp tools` and the doctor's MCP check: an agent's MCP tools as rows (listing servers
whose cache cannot answer), and each configured server started and listed once."""

from __future__ import annotations

from typing import Any

from holon.agent.handle import Agent
from holon.home import registry
from holon.mcp import config, discovery, pool
from holon.mcp.failure import McpFailure
from holon.runtime.turn.context import execution_root
from holon.tools.mcp_tool import McpTool


def tool_rows(agent_arg: str, *, refresh: bool = False) -> list[dict[str, Any]]:
    """One row per MCP tool AGENT's model sees, with whether its schema is sent strict."""
    agent = Agent(registry.resolve(agent_arg))
    root, cwd = execution_root(agent)
    try:
        specs = discovery.tools(agent.home, root, cwd, refresh=refresh)
    finally:
        pool.close_all()
    rows = []
    for spec in specs:
        tool = McpTool(spec)
        rows.append(
            {
                "name": spec.model_name,
                "server": spec.server.name,
                "tool": spec.tool,
                "strict": tool.strict is not None,
                "description": spec.description,
                "input_schema": spec.input_schema,
            }
        )
    return rows


def doctor_findings(agent: Agent, finding: Any) -> list[dict[str, Any]]:
    """One finding per server AGENT uses, started and listed now (nothing is written)."""
    root, cwd = execution_root(agent)
    out = []
    for server in config.for_agent(agent.home):
        check = f"mcp:{server.name}"
        try:
            got = discovery.probe(agent.home, server, root, cwd)
        except McpFailure as exc:
            fix = f"holon mcp list  # then fix or disable [mcp_servers.{server.name}]"
            out.append(finding(check, "error", exc.message, fix, kind=exc.kind))
            continue
        msg = f"{server.transport}: {got['tools']} tools, version {got['version']}"
        out.append(finding(check, "ok", msg))
    return out

"""Profile presets as data: which tools an agent's `profile_preset` lets its model see and call.

`public_named` gets every tool: the built-in catalog and the plugins loaded with
HOLON_TOOL_PLUGINS. `private_child` gets a fixed allow list of built-in tools by name: everything
but UseWorkspace / DetachWorkspace (its parent binds its workspace at spawn); its NotifyOperator
goes to its supervising parent, not the operator (holon.tasks.child.childnotify). SpawnAgent stays:
the delegation limits bind it, and it refuses a child `preset=public_named` (holon.tools.agents).
A plugin, or a built-in tool added later and not yet listed here, is refused to a child: the list
fails closed, never widens by itself. Stdlib only: read on every provider round.
"""

from __future__ import annotations

from collections.abc import Iterable

from holon.home.layout import AGENT_JSON_HINT, Home, corrupt, read_identity
from holon.ids import quote

PUBLIC_NAMED = "public_named"
PRIVATE_CHILD = "private_child"
PRESETS = (PUBLIC_NAMED, PRIVATE_CHILD)

# what a private child is never offered, and why (the refusal's recovery hint says it)
CHILD_WITHHELD = {
    "UseWorkspace": "a child's workspace is bound by its parent at spawn",
    "DetachWorkspace": "a child's workspace is bound by its parent at spawn",
}

PRIVATE_CHILD_TOOLS = frozenset(
    {
        "ApplyPatch",
        "ExecCommand",
        "ExecCommandBatch",
        "TaskStatus",
        "TaskOutput",
        "TaskInput",
        "TaskStop",
        "TaskList",
        "CreateWorkItem",
        "PickWorkItem",
        "UpdateWorkItem",
        "CompleteWorkItem",
        "GetWorkItem",
        "ListWorkItems",
        "MemorySearch",
        "MemoryGet",
        "Sleep",
        "Enqueue",
        "NotifyOperator",
        "SpawnAgent",
        "AgentGet",
    }
)


def preset_of(home: Home) -> str:
    """The agent's profile preset from `.holon/agent.json` (read cheaply, no pydantic). A home
    without the field (made before presets) gets the one `holon init` would give it: private
    for a private or child agent, else public_named. A value that is not a preset is
    `corrupt_state`, never read as the wider one."""
    ident = read_identity(home.agent_json)
    preset = ident.get("profile_preset")
    if preset is None:
        private = ident.get("visibility") == "private" or ident.get("kind") == "child"
        return PRIVATE_CHILD if private else PUBLIC_NAMED
    if preset not in PRESETS:
        raise corrupt(
            home.agent_json,
            f"has an unknown profile_preset ({quote(preset, 60)}; one of {', '.join(PRESETS)})",
            AGENT_JSON_HINT,
        )
    return preset


def allows(preset: str, tool_name: str) -> bool:
    """Whether an agent with `preset` may see and call `tool_name`."""
    if preset == PUBLIC_NAMED:
        return True
    if preset == PRIVATE_CHILD:  # MCP tools: only the servers its parent grants (holon.mcp)
        return tool_name in PRIVATE_CHILD_TOOLS or tool_name.startswith("mcp__")
    return False  # not a preset: nothing (preset_of never returns one)


def allowed(preset: str, names: Iterable[str]) -> list[str]:
    """The names among `names` that `preset` allows, in their order."""
    return [n for n in names if allows(preset, n)]


def refusal_hint(preset: str, tool_name: str) -> str:
    """Why `preset` has no `tool_name`, as a recovery hint for the model or the operator."""
    reason = CHILD_WITHHELD.get(tool_name) if preset == PRIVATE_CHILD else None
    return (reason + "; " if reason else "") + (
        f"call one of the tools the {preset} profile offers (they are in your tool catalog)"
    )

"""Agent tools: SpawnAgent (a private child under this agent's supervision, or a public named
agent) and AgentGet (the summary of this agent or one of its descendants)."""

from __future__ import annotations

import os
from typing import ClassVar, Literal

from pydantic import Field

from holon.agent import lineage, profiles, workspaces
from holon.agent.admission import admit
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home import registry
from holon.home.init import init_home, resolve_template
from holon.home.layout import AGENT_ID, Home
from holon.paths import agents_dir
from holon.store.atomic import write_json
from holon.tasks import agentsummary
from holon.tasks.child import children, childview
from holon.tools.base import Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput

MAX_MESSAGE_CHARS = 64000


class SpawnAgentArgs(ToolArgs):
    initial_message: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        description="The delegated task, as the child's first message (required for "
        "private_child; its first line labels the supervision task). For public_named: an "
        "optional first message.",
    )
    preset: Literal["private_child", "public_named"] = Field(
        "private_child",
        description="private_child: a private agent supervised through a task handle (its final "
        "report returns as a task_result); public_named: a new independent public agent.",
    )
    agent_id: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="The new agent's id (required for public_named; a private child gets one).",
    )
    template: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="Home template name (default holon-default), not a path.",
    )
    workspace_mode: Literal["inherit", "worktree"] = Field(
        "inherit",
        description="private_child only: work in this agent's active workspace (inherit) or in a "
        "fresh git worktree of it (worktree; the workspace must be a git repository).",
    )


class AgentGetArgs(ToolArgs):
    agent_id: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="This agent (the default) or one of its descendants (a child's agent id).",
    )


def _failure(exc: Exception) -> ToolFailure:
    if isinstance(exc, children.Refused):
        return ToolFailure(exc.kind, exc.message, details=exc.details, recovery_hint=exc.hint)
    assert isinstance(exc, HolonError)
    return ToolFailure(exc.kind, exc.message, recovery_hint=exc.hint)


class SpawnAgent(Tool):
    name = "SpawnAgent"
    family = "agent"
    mutates = True
    description = (
        "Delegate bounded work to a new agent. preset=private_child (default) starts a private "
        "child with initial_message as its task; it runs in the background and its final report "
        "returns to you as a task_result (inspect or steer it with TaskStatus, TaskOutput, "
        "TaskInput, TaskStop on the supervision_task_id). preset=public_named creates an "
        "independent public agent with agent_id."
    )
    guidance: ClassVar[str] = (
        "After SpawnAgent, end the turn: the child's task_result message wakes you when it is "
        "done. Do not poll it with TaskOutput."
    )
    Args = SpawnAgentArgs

    def validate(self, ctx: ToolContext, args: SpawnAgentArgs) -> None:
        if args.preset == "private_child" and args.initial_message is None:
            raise ToolFailure(
                "invalid_tool_input",
                "a private_child needs initial_message: the task it is given",
                details={"field": "initial_message"},
                recovery_hint="pass initial_message with the delegated task",
            )
        if args.template is not None and not AGENT_ID.fullmatch(args.template):
            raise ToolFailure(  # a path would copy any directory holding an AGENTS.md (another
                "invalid_tool_input",  # agent's home, its keys) into a home the model reads
                "template must be the name of a built-in template or of one in "
                "~/.agents/templates, not a path",
                details={"field": "template"},
                recovery_hint="omit template for holon-default, or name a template",
            )
        if args.preset == "public_named" and args.agent_id is None:
            raise ToolFailure(
                "invalid_tool_input",
                "a public_named agent needs an explicit agent_id",
                details={"field": "agent_id"},
                recovery_hint="pass agent_id",
            )
        if args.preset == "public_named" and args.workspace_mode != "inherit":
            raise ToolFailure(
                "invalid_tool_input",
                "workspace_mode applies to private_child only",
                details={"field": "workspace_mode"},
                recovery_hint="drop workspace_mode for a public_named agent",
            )

    def run(self, ctx: ToolContext, args: SpawnAgentArgs) -> ToolOutput:
        try:
            if args.preset == "public_named":
                return self._public(ctx, args)
            record = children.spawn(
                ctx.agent,
                args.initial_message or "",
                child_id=args.agent_id,
                template=args.template or "holon-default",
                workspace_mode=args.workspace_mode,
                parent_message_id=ctx.message_id,
                turn_id=ctx.turn_id,
            )
        except (children.Refused, HolonError) as exc:
            raise _failure(exc) from None
        child_id = record["child_agent_id"]
        result = {
            "agent_id": child_id,
            "child_agent_id": child_id,
            "supervision_task_id": record["id"],
            "task_handle": {"task_id": record["id"], "kind": record["kind"]},
            "child_supervision": childview.projection(record),
        }
        return ToolOutput(
            f"spawned private child {child_id}, supervised as task {record['id']}; its final "
            "report returns as a task_result",
            result,
        )

    def _public(self, ctx: ToolContext, args: SpawnAgentArgs) -> ToolOutput:
        """A public agent bound by this one (holon.agent.lineage): refused to a supervised agent
        (a private child reports to its parent, it does not found agents of its own); for any
        other, it takes one of this agent's live-children places, a level of its delegation
        depth, and its tokens count against this agent's daily budget, up to the lineage root."""
        if (
            ctx.home.parent_root is not None
            or profiles.preset_of(ctx.home) != profiles.PUBLIC_NAMED
        ):
            raise children.Refused(
                "public_spawn_refused",
                f"agent {ctx.agent.id} is supervised by its parent and cannot create public agents",
                "spawn a private_child for delegated work, or end the turn with your result: "
                "your parent decides what runs next",
                preset="public_named",
            )
        agent_id = registry.check_agent_id(args.agent_id or "")
        children.check_limits(ctx.home)
        resolve_template(args.template or "holon-default")  # refused before anything is written
        if agent_id in registry.load():
            raise children.Refused(
                "agent_exists", f"an agent {agent_id!r} already exists", "choose another agent_id"
            )
        lineage.record_spawn(ctx.home, agent_id, agents_dir() / agent_id)  # log, then create
        home = init_home(
            None,
            agent_id,
            args.template or "holon-default",
            parent_agent_id=ctx.agent.id,
            lineage=lineage.new_public_lineage(ctx.home),
        )
        ctx.agent.event("public_agent_spawned", agent_id=agent_id, home=str(home.root))
        attached = workspaces.read(ctx.home).get("attached") or {}
        if attached:  # the attached set only: never the active workspace or its worktree
            new = Agent(home)
            kept = {wid: {**e, "worktree": None} for wid, e in attached.items()}
            with new.state_lock():
                write_json(
                    home.workspace_json, workspaces.stored({"schema_version": 1, "attached": kept})
                )
                new.update_state(lambda s: setattr(s, "attached_workspaces", sorted(kept)))
        if args.initial_message:
            admit(
                home,
                "followup",
                "internal_followup",
                {"type": "text", "text": args.initial_message},
                source="bootstrap",
                metadata={"created_by": ctx.agent.id},
            )
        return ToolOutput(
            f"created public agent {agent_id}; it counts against this agent's delegation limits "
            "and daily token budget",
            {"agent_id": agent_id},
        )


class AgentGet(Tool):
    name = "AgentGet"
    family = "agent"
    description = (
        "Summary of this agent, or of one of its descendants (agent_id): identity, status, "
        "active workspace, current work item, token usage, loaded AGENTS.md files, and a compact "
        "snapshot of each live child."
    )
    Args = AgentGetArgs

    def run(self, ctx: ToolContext, args: AgentGetArgs) -> ToolOutput:
        home = ctx.home if args.agent_id in (None, ctx.agent.id) else _descendant(ctx, args)
        summary = agentsummary.summary(Agent(home))
        return ToolOutput(f"agent {home.agent_id} is {summary['status']}", {"agent": summary})


def _descendant(ctx: ToolContext, args: AgentGetArgs) -> Home:
    refused = ToolFailure(
        "agent_not_visible",
        f"agent {args.agent_id!r} is not this agent or one of its descendants",
        details={"agent_id": args.agent_id},
        recovery_hint="AgentGet inspects this agent and the children it spawned; omit agent_id "
        "for this agent",
    )
    try:
        home = registry.resolve(registry.check_agent_id(args.agent_id or ""))
    except HolonError:
        raise refused from None
    root = home.parent_root
    while root is not None:
        if os.path.abspath(root) == os.path.abspath(ctx.home.root):
            return home
        root = Home(root).parent_root
    raise refused

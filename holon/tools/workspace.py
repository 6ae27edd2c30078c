"""Workspace tools: UseWorkspace (bind the execution to a project, directly or in an isolated git
worktree) and DetachWorkspace (forget an inactive one); over holon.agent.workspaces."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from holon.agent import workspaces
from holon.errors import HolonError
from holon.sandbox import policy
from holon.tools.base import Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput

GUIDANCE = """\
UseWorkspace: your file and shell tools run in the active workspace (the agent home until you \
choose one). UseWorkspace with a path binds a project directory: ApplyPatch paths and \
ExecCommand run from its cwd, and its AGENTS.md (or CLAUDE.md) is shown to you. mode isolated \
works in a git worktree of your own on its own branch, leaving the main checkout untouched; \
commit there when done. UseWorkspace workspace_id=agent_home returns home. While bound \
elsewhere, ApplyPatch still writes your memory files given their absolute paths in the home."""


def check_allowed(ctx: ToolContext, path: str) -> None:
    """The model may bind a directory its sandbox already lets its commands write (its home,
    anything in full-access, a directory inside one of the policy's writable_roots), or one the
    operator attached (`holon workspace
    use`, `holon run --workspace`, a parent's binding); anything else would widen its own
    confinement, so the operator decides."""
    sandbox = policy.read(ctx.home)
    if sandbox.mode == "full-access":
        return
    target = Path(os.path.realpath(Path(ctx.cwd) / path))
    if not target.is_dir():
        return  # not a directory: workspaces.use says so
    allowed = [Path(os.path.realpath(r)) for r in (ctx.home.root, *sandbox.writable_roots)]
    doc = workspaces.read(ctx.home)
    allowed += [Path(e["anchor"]) for e in doc.get("attached", {}).values() if e.get("anchor")]
    if any(target == r or r in target.parents for r in allowed):
        return
    raise ToolFailure(
        "workspace_not_allowed",
        f"{target} is outside the workspaces this agent may bind itself",
        details={"path": str(target), "sandbox_mode": sandbox.mode},
        recovery_hint="ask the operator to bind it (`holon workspace use AGENT PATH`) or to allow "
        "it (`holon sandbox set AGENT workspace-write --writable-root DIR`)",
    )


def _failure(exc: HolonError) -> ToolFailure:
    kind = "invalid_tool_input" if exc.kind == "invalid_input" else exc.kind
    return ToolFailure(kind, exc.message, recovery_hint=exc.hint)


def _summary(b: dict[str, Any]) -> str:
    where = f"{b['execution_root']}"
    if b.get("worktree"):
        where += f" (worktree on branch {b['worktree']['branch']})"
    return f"workspace {b['workspace_id']} ({b['mode']}): root {where}, cwd {b['cwd']}"


class UseWorkspace(Tool):
    name = "UseWorkspace"
    family = "workspace"
    mutates = True
    description = (
        "Make a workspace active: give exactly one of path (a project directory; a git "
        "repository is identified by its main checkout) or workspace_id (one already attached; "
        "agent_home returns to your home). mode direct works in the project itself; mode "
        "isolated works in a git worktree of your own on its own branch. File and shell tools "
        "then run in that workspace; cwd (relative to its root) picks the working directory. "
        "A path must be one your operator attached or allowed (a sandbox writable root)."
    )
    guidance: ClassVar[str] = GUIDANCE

    class Args(ToolArgs):
        path: str | None = Field(
            None, min_length=1, description="A directory (relative paths from the cwd)."
        )
        workspace_id: str | None = Field(
            None, min_length=1, max_length=200, description="An attached workspace, or agent_home."
        )
        mode: Literal["direct", "isolated"] = Field(
            "direct", description="direct: the project itself; isolated: a worktree of your own."
        )
        cwd: str | None = Field(
            None, min_length=1, description="Working directory inside the execution root."
        )
        isolation_label: str | None = Field(
            None,
            min_length=1,
            max_length=48,
            description="Names the isolated worktree and its branch (holon/<agent>/<label>).",
        )

    def validate(self, ctx: ToolContext, args: ToolArgs) -> None:
        assert isinstance(args, UseWorkspace.Args)
        if (args.path is None) == (args.workspace_id is None):
            raise ToolFailure(
                "invalid_tool_input",
                "UseWorkspace needs exactly one of path or workspace_id",
                details={"field": "path"},
                recovery_hint="give a path to attach a directory, or a workspace_id",
            )

    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolOutput:
        assert isinstance(args, UseWorkspace.Args)
        if args.path is not None:
            check_allowed(ctx, args.path)
        try:
            bound = workspaces.use(
                ctx.agent,
                path=args.path,
                workspace=args.workspace_id,
                mode=args.mode,
                cwd=args.cwd,
                label=args.isolation_label,
                base=ctx.cwd,
            )
        except HolonError as exc:
            raise _failure(exc) from None
        ctx.agent.event("workspace_used", **bound)
        return ToolOutput(_summary(bound), bound)


class DetachWorkspace(Tool):
    name = "DetachWorkspace"
    family = "workspace"
    mutates = True
    description = (
        "Forget an attached workspace that is not active (switch to agent_home first). Nothing "
        "is deleted: its directory stays, and an isolated worktree of yours is kept and listed "
        "as retained for your operator to review and clean up."
    )

    class Args(ToolArgs):
        workspace_id: str = Field(min_length=1, max_length=200)

    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolOutput:
        assert isinstance(args, DetachWorkspace.Args)
        try:
            out = workspaces.detach(ctx.agent, args.workspace_id)
        except HolonError as exc:
            raise _failure(exc) from None
        ctx.agent.event("workspace_detached", workspace_id=args.workspace_id)
        text = f"detached {args.workspace_id}"
        tree = out.get("worktree")
        if tree and tree.get("retained_reason") == "uncommitted_changes":
            text += f"; its worktree {tree['path']} was kept: it has uncommitted changes"
        elif tree:
            text += f"; its worktree {tree['path']} was kept, listed as retained"
        return ToolOutput(text, out)

"""ApplyPatch: the file-mutation tool over holon.patch; one unified diff per call, applied all or
nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field

from holon.errors import HolonError
from holon.patch import journal, receipt
from holon.patch.commit import apply
from holon.patch.errors import PatchError
from holon.patch.grammar import GRAMMAR
from holon.patch.model import FilePatch
from holon.patch.parser import parse_patch
from holon.sandbox import confine
from holon.tools.base import RenderPolicy, Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput
from holon.tools.exec_command import sandbox_failure

DESCRIPTION = (
    "Create, edit, delete and rename text files by applying a unified diff (the format of "
    "`git diff` and `diff -u`). One call may change several files; either every file patch applies "
    "or nothing changes. Each file patch is `--- a/<path>`, `+++ b/<path>`, then hunks "
    "`@@ -old_start,old_count +new_start,new_count @@` whose lines start with ' ' (context), '-' "
    "(remove) or '+' (add). Add a file with `--- /dev/null`, delete one with `+++ /dev/null`, "
    "rename with `diff --git a/<old> b/<new>` + `rename from <old>` + `rename to <new>` "
    "(optionally followed by ---/+++ and hunks). Paths are relative to the working directory and "
    "must stay inside the workspace. Context and removed lines must match the file exactly; line "
    "numbers are hints, so include about three unchanged context lines per hunk: a hunk whose "
    "lines occur several times, none at its line number, is refused, never guessed. Not "
    "supported: binary files, copies, symlinks, submodules; mode lines are accepted and ignored "
    "(permissions never change). Do not use the `*** Begin Patch` format."
)


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(
        description="Unified diff text: `--- a/<path>`, `+++ b/<path>`, then "
        "`@@ -a,b +c,d @@` hunks; several file patches may follow one another."
    )


def _touches_memory(ctx: ToolContext, changes: list[Any]) -> bool:
    """A changed path in memory/ or work-items/: sources of the memory index."""
    roots = (ctx.home.memory.resolve(), ctx.home.work_items_dir.resolve())
    paths = [p.resolve() for c in changes for p in (c.src, c.dst) if p is not None]
    return any(p.is_relative_to(r) for p in paths for r in roots)


def _rooted(ctx: ToolContext, patches: list[FilePatch]) -> tuple[Path, Path]:
    """(root, cwd) to apply `patches` under: the execution root, or the agent home when a
    workspace elsewhere is bound and every path of the patch lies in the home (its memory and
    notes stay writable). Absolute paths inside the chosen root are made relative to it."""
    roots = [Path(os.path.realpath(ctx.execution_root))]
    home = Path(os.path.realpath(ctx.home.root))
    if home != roots[0]:
        roots.append(home)
    cwd = os.path.realpath(ctx.cwd)
    named = [(fp, attr) for fp in patches for attr in ("old_path", "new_path")]
    named = [(fp, attr) for fp, attr in named if getattr(fp, attr)]
    absolute = {
        (id(fp), attr): Path(os.path.normpath(os.path.join(cwd, getattr(fp, attr))))
        for fp, attr in named
    }
    for root in roots:
        if not all(p == root or root in p.parents for p in absolute.values()):
            continue
        rooted = any(os.path.isabs(getattr(fp, attr)) for fp, attr in named)
        if root == roots[0] and not rooted:
            return ctx.execution_root, ctx.cwd
        for fp, attr in named:
            setattr(fp, attr, os.path.relpath(absolute[(id(fp), attr)], root))
        return root, root
    return ctx.execution_root, ctx.cwd  # the patch refuses the path that leaves the roots


def _confine(ctx: ToolContext, changes: list[Any]) -> None:
    """ApplyPatch writes as the agent's commands may: never in .holon/, not in read-only."""
    targets = [p for c in changes for p in (c.src, c.dst) if p is not None]
    try:
        refused = confine.refused_write(ctx.home, ctx.execution_root, targets)
    except HolonError as exc:  # the policy file is invalid: nothing is written
        raise sandbox_failure(exc) from None
    if refused:
        path, why = refused
        raise ToolFailure(
            "sandbox_denied",
            f"ApplyPatch may not write {path}: {why}",
            details={"path": path},
            recovery_hint="change files inside the workspace only; the operator chooses the "
            "sandbox mode (holon sandbox set)",
        )


class ApplyPatch(Tool):
    name = "ApplyPatch"
    description = DESCRIPTION
    Args = ApplyPatchArgs
    family = "file"
    mutates = True
    freeform_grammar = GRAMMAR

    def parse_freeform(self, raw: str) -> dict[str, Any]:
        return {"patch": raw}

    def run(self, ctx: ToolContext, args: ToolArgs) -> ToolOutput:
        assert isinstance(args, ApplyPatchArgs)
        journal.recover(ctx.home.patches)  # a patch a crash interrupted, before this one
        try:
            patches = parse_patch(args.patch)
            root, cwd = _rooted(ctx, patches)
            changes = apply(
                root,
                cwd,
                patches,
                journal_dir=ctx.home.patches,
                check=lambda planned: _confine(ctx, planned),
            )
        except PatchError as exc:
            raise ToolFailure(
                exc.kind,
                exc.message,
                details=exc.details,
                recovery_hint=exc.recovery_hint,
                retryable=exc.retryable,
            ) from None
        if _touches_memory(ctx, changes):
            ctx.home.mark_memory_dirty()
        result = receipt.build_result(changes)
        return ToolOutput(receipt.summary(result), result)

    def render(self, envelope: dict[str, Any], policy: RenderPolicy) -> str:
        return receipt.render(envelope["result"])

"""ExecCommandBatch: a sequential batch of restricted ExecCommand items; no promotion, per-item
status."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from holon.errors import HolonError
from holon.tasks.command import command, spawn
from holon.text import head_tail
from holon.tools.base import RenderPolicy, Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput
from holon.tools.exec_command import resolve_workdir, sandbox_failure, split_budget


class BatchItem(ToolArgs):
    cmd: str = Field(description="Shell command line to run.", min_length=1)
    workdir: str | None = Field(None, description="Working directory inside the execution root.")
    shell: str | None = Field(
        None, description="Shell to run the command with (default /bin/bash)."
    )
    login: bool = Field(
        True,
        description="Use the environment a login shell gives (PATH and what the profile "
        "exports), captured once per tick with the profile's output discarded; false: the "
        "plain environment.",
    )
    yield_time_ms: int = Field(
        10000,
        ge=0,
        le=600000,
        description="Time limit; a command still running is "
        "stopped and reported as a timed-out item.",
    )
    max_output_tokens: int | None = Field(
        None, ge=1, le=64000, description="Output budget for this item."
    )


class ExecCommandBatchArgs(ToolArgs):
    commands: list[BatchItem] = Field(
        description="Commands to run one after another.", min_length=1, max_length=32
    )


class ExecCommandBatch(Tool):
    name = "ExecCommandBatch"
    family = "command"
    mutates = True
    description = (
        "Run several short shell commands in order and get one grouped receipt with each item's "
        "exit status and bounded output. Items never become background tasks: an item that runs "
        "past its yield_time_ms is stopped and reported as timed out. Use ExecCommand for long, "
        "interactive or tty commands."
    )
    Args = ExecCommandBatchArgs

    def validate(self, ctx: ToolContext, args: ExecCommandBatchArgs) -> None:
        for i, item in enumerate(args.commands):
            try:
                resolve_workdir(ctx, item.workdir)
            except ToolFailure as exc:
                exc.details = {**(exc.details or {}), "field": f"commands.{i}.workdir"}
                raise

    def run(self, ctx: ToolContext, args: ExecCommandBatchArgs) -> ToolOutput:
        items = [
            self._item(ctx, i, item, len(args.commands)) for i, item in enumerate(args.commands)
        ]
        ok = sum(1 for it in items if it["status"] == "completed" and it["exit_status"] == 0)
        return ToolOutput(f"batch of {len(items)} command(s): {ok} succeeded", {"items": items})

    def _item(self, ctx: ToolContext, i: int, item: BatchItem, n: int) -> dict[str, Any]:
        spec = command.CommandSpec(
            item.cmd,
            resolve_workdir(ctx, item.workdir),
            item.shell or command.default_shell(),
            item.login,
            False,
            False,
            item.yield_time_ms,
            ctx.execution_root,
        )
        base = {"index": i, "cmd": item.cmd, "workdir": str(spec.workdir)}
        try:
            fin = command.run(ctx.agent, spec, promote=False)
        except HolonError as exc:  # the sandbox cannot be enforced: no command of the batch runs
            raise sandbox_failure(exc) from None
        except spawn.SpawnError as exc:
            return {
                **base,
                "status": "error",
                "exit_status": None,
                "duration_ms": 0,
                "error": {"kind": "spawn_failed", "message": str(exc), "details": exc.details},
            }
        budget = max(
            200,
            ctx.policy.budget_chars(item.max_output_tokens) // (1 if item.max_output_tokens else n),
        )
        ob, eb = split_budget(fin.stdout, fin.stderr, budget)
        out, ocut = head_tail(fin.stdout, ob)
        err, ecut = head_tail(fin.stderr, eb)
        res = {
            **base,
            "status": "completed",
            "exit_status": fin.exit_status,
            "stdout_preview": out,
            "stderr_preview": err,
            "truncated": ocut or ecut,
            "duration_ms": fin.duration_ms,
            "error": None,
        }
        if fin.exit_status is None:
            res["status"] = "error"
            res["error"] = {
                "kind": "command_timeout",
                "message": f"still running after {item.yield_time_ms} ms; "
                "stopped (batch items are not promoted to tasks)",
                "details": {"signal": fin.signal},
            }
        return res

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        lines = [env["summary_text"]]
        for it in env["result"]["items"]:
            head = f"=== [{it['index']}] $ {it['cmd']}"
            if it["error"]:
                lines.append(
                    f"{head} -> {it['status']}: {it['error']['kind']}: {it['error']['message']}"
                )
            else:
                lines.append(f"{head} -> exit {it['exit_status']} in {it['duration_ms']} ms")
            for name in ("stdout", "stderr"):
                text = (it.get(f"{name}_preview") or "").rstrip("\n")
                if text:
                    lines += [f"--- {name} ---", text]
        return "\n".join(lines)

"""ExecCommand: run a shell command; completed within its yield, or promoted to a background
command_task."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from holon.errors import HolonError
from holon.sandbox import policy as sandbox_policy
from holon.store.artifacts import write_artifact
from holon.tasks import store
from holon.tasks.command import command, spawn
from holon.text import head_tail, pretty_if_json
from holon.tools.base import RenderPolicy, Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput

GUIDANCE = (
    "ExecCommand runs shell commands in the execution root. Inspect with `rg --files`, `rg -n`, "
    "`sed -n START,ENDp`, `head` and `tail` rather than whole-file `cat`. A command still running "
    "after `yield_time_ms` becomes a background task (disposition promoted_to_task). Do not poll "
    "it with TaskOutput or TaskStatus: end your turn (Sleep) and the task_result message wakes "
    "you when it ends. Use TaskInput to type into tasks started with accepts_input or tty, and "
    "TaskStop to stop them."
)


# what a refused write or connection prints (EACCES, EPERM, EROFS)
DENIAL_MARKERS = ("Permission denied", "Operation not permitted", "Read-only file system")


class ExecCommandArgs(ToolArgs):
    cmd: str = Field(description="Shell command line to run.", min_length=1)
    workdir: str | None = Field(
        None,
        description="Working directory, absolute or relative to the current "
        "directory; must be inside the execution root.",
    )
    shell: str | None = Field(
        None, description="Shell to run the command with (default /bin/bash)."
    )
    login: bool = Field(
        True,
        description="Use the environment a login shell gives (PATH and what the profile "
        "exports), captured once per tick with the profile's output discarded; false: the "
        "plain environment.",
    )
    tty: bool = Field(
        False, description="Run under a pseudo-terminal; output is one combined transcript."
    )
    accepts_input: bool | None = Field(
        None,
        description="Keep stdin open so TaskInput can write to it later (default: same as tty).",
    )
    yield_time_ms: int = Field(
        10000,
        ge=0,
        le=600000,
        description="How long to wait for the command before it continues as a background task.",
    )
    max_output_tokens: int | None = Field(
        None,
        ge=1,
        le=64000,
        description="Model-visible output budget in estimated tokens (default 8000).",
    )
    duplicate_policy: Literal["reuse_running", "start_new"] = Field(
        "reuse_running",
        description="reuse_running returns the running task for an identical command; "
        "start_new always starts another.",
    )


def resolve_workdir(ctx: ToolContext, workdir: str | None) -> Path:
    """The absolute workdir, or execution_root_violation when it leaves the execution root."""
    base = Path(ctx.cwd)
    path = Path(os.path.normpath(base / workdir)) if workdir else base
    root = Path(os.path.realpath(ctx.execution_root))
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise ToolFailure(
            "execution_root_violation",
            f"workdir {workdir} is outside the execution root {root}",
            details={"field": "workdir", "workdir": str(path), "execution_root": str(root)},
            recovery_hint=f"use a workdir inside {root} (relative paths resolve from {base})",
        )
    return path


def split_budget(stdout: str, stderr: str, budget: int) -> tuple[int, int]:
    if len(stdout) + len(stderr) <= budget:
        return budget, budget
    err = min(len(stderr), budget // 4) if stdout else budget
    return max(1, budget - err), max(1, err)


def completed_result(ctx: ToolContext, fin: Any, budget: int) -> dict[str, Any]:
    out_budget, err_budget = split_budget(fin.stdout, fin.stderr, budget)
    out_prev, out_cut = head_tail(pretty_if_json(fin.stdout), out_budget)
    err_prev, err_cut = head_tail(fin.stderr, err_budget)
    artifacts: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        "disposition": "completed",
        "exit_status": fin.exit_status,
        "stdout_preview": out_prev,
        "stderr_preview": err_prev,
        "truncated": out_cut or err_cut,
        "artifacts": artifacts,
        "stdout_artifact": None,
        "stderr_artifact": None,
        "duration_ms": fin.duration_ms,
    }
    if fin.signal is not None:
        result["signal"] = fin.signal
    for cut, name, text in ((out_cut, "stdout", fin.stdout), (err_cut, "stderr", fin.stderr)):
        if cut:
            path = write_artifact(ctx.home.artifacts, f"exec-{name}", text)
            result[f"{name}_artifact"] = len(artifacts)
            artifacts.append({"path": path, "kind": name, "bytes": len(text.encode("utf-8"))})
    return result


def sandbox_failure(exc: HolonError) -> ToolFailure:
    """The agent's sandbox cannot be enforced or its config is invalid: no command runs."""
    return ToolFailure(
        exc.kind,
        exc.message,
        details={},
        recovery_hint=(exc.hint or "") + " (the operator must do this; end the turn and report it)",
    )


def sandbox_denied(ctx: ToolContext, fin: Any) -> dict[str, Any] | None:
    """A failed command whose output reads like a refused write or connection, in a sandbox that
    refuses some: say so, so the model does not retry what cannot work."""
    if fin.exit_status == 0:
        return None
    output = fin.stdout[-4000:] + fin.stderr[-4000:]
    if not any(marker in output for marker in DENIAL_MARKERS):
        return None
    policy = sandbox_policy.read(ctx.home)
    if policy.mode == "full-access" and policy.network == "allow":
        return None
    writable = {
        "read-only": "nowhere but the command's scratch directory ($TMPDIR)",
        "workspace-write": f"only inside {ctx.execution_root} and the temporary directories",
        "full-access": "anywhere",
    }[policy.mode]
    net = "TCP connections are refused" if policy.network == "deny" else "the network is open"
    return {
        "mode": policy.mode,
        "network": policy.network,
        "hint": f"this may be the {policy.mode} sandbox: writes are allowed {writable}, "
        f"never in the agent's .holon/; {net}. Do not retry the same operation; "
        "work inside the writable places, or ask the operator to change the sandbox.",
    }


def task_handle(record: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": record["id"], "kind": record["kind"]}


class ExecCommand(Tool):
    name = "ExecCommand"
    family = "command"
    mutates = True
    description = (
        "Run a shell command in the execution root and return its exit status and bounded "
        "stdout/stderr previews (full output in artifacts when truncated). A command still running "
        "after yield_time_ms continues as a background task and its task_result message arrives "
        "when it ends: end the turn instead of polling. Runs in the agent's sandbox "
        "($HOLON_SANDBOX): .holon/ is read-only; credential variables are not passed."
    )
    guidance: ClassVar[str] = GUIDANCE
    Args = ExecCommandArgs

    def validate(self, ctx: ToolContext, args: ExecCommandArgs) -> None:
        resolve_workdir(ctx, args.workdir)
        if args.accepts_input is False and args.tty:
            raise ToolFailure(
                "invalid_tool_input",
                "a tty command always accepts input through its terminal",
                details={"field": "accepts_input"},
                recovery_hint="omit accepts_input, or set tty to false",
            )

    def spec(self, ctx: ToolContext, args: ExecCommandArgs) -> Any:
        accepts = args.tty if args.accepts_input is None else args.accepts_input
        return command.CommandSpec(
            args.cmd,
            resolve_workdir(ctx, args.workdir),
            args.shell or command.default_shell(),
            args.login,
            args.tty,
            accepts,
            args.yield_time_ms,
            ctx.execution_root,
        )

    def run(self, ctx: ToolContext, args: ExecCommandArgs) -> ToolOutput:
        spec = self.spec(ctx, args)
        if args.duplicate_policy == "reuse_running":
            existing = store.find_running(ctx.home, spec.digest)
            if existing is not None:
                return ToolOutput(
                    f"already running as task {existing['id']}",
                    {
                        "disposition": "already_running",
                        "task_handle": task_handle(existing),
                        "command": existing["command"],
                    },
                )
        try:
            outcome = command.run(ctx.agent, spec, parent_message_id=ctx.message_id)
        except HolonError as exc:
            raise sandbox_failure(exc) from None
        except spawn.SpawnError as exc:
            raise ToolFailure(
                "spawn_failed",
                str(exc),
                details={"cmd": args.cmd, **exc.details},
                recovery_hint="check the shell and workdir, then run the command again",
            ) from None
        budget = ctx.policy.budget_chars(args.max_output_tokens)
        if isinstance(outcome, command.Finished):
            result = completed_result(ctx, outcome, budget)
            denied = sandbox_denied(ctx, outcome)
            if denied:
                result["sandbox_denied"] = denied
            status = (
                f"exit {outcome.exit_status}"
                if outcome.exit_status is not None
                else f"killed by signal {outcome.signal}"
            )
            return ToolOutput(f"command completed: {status}", result)
        preview, cut = head_tail(outcome.initial_output, budget)
        result = {
            "disposition": "promoted_to_task",
            "task_handle": task_handle(outcome.task),
            "command": outcome.task["command"],
            "initial_output_preview": preview,
            "initial_output_truncated": cut,
            "duration_ms": outcome.duration_ms,
        }
        return ToolOutput(
            f"still running after {args.yield_time_ms} ms; continues as task {outcome.task['id']}",
            result,
        )

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        return render_command(env["summary_text"], env["result"])


def render_command(summary: str, r: dict[str, Any]) -> str:
    """The model-visible receipt: a status line, then the output as text (never JSON-escaped)."""
    disp = r["disposition"]
    if disp == "completed":
        lines = [f"{summary} in {r['duration_ms']} ms"]
        if r["stdout_preview"]:
            lines += ["--- stdout ---", r["stdout_preview"].rstrip("\n")]
        if r["stderr_preview"]:
            lines += ["--- stderr ---", r["stderr_preview"].rstrip("\n")]
        if not r["stdout_preview"] and not r["stderr_preview"]:
            lines.append("(no output)")
        if r.get("sandbox_denied"):
            lines.append(f"[sandbox_denied] {r['sandbox_denied']['hint']}")
        for i, art in enumerate(r["artifacts"]):
            lines.append(
                f"[artifacts[{i}]] full {art['kind']} ({art['bytes']} bytes): {art['path']}"
            )
        return "\n".join(lines)
    handle = r["task_handle"]
    if disp == "already_running":
        return (
            f"{summary}: `{r['command']['cmd']}` (task_id {handle['task_id']}). Its task_result "
            "will arrive when it ends; use TaskStatus/TaskOutput with this task_id, or "
            "duplicate_policy=start_new."
        )
    lines = [
        f"{summary} (task_id {handle['task_id']}).",
        "End your turn; a task_result message wakes you when it finishes. Do not poll.",
    ]
    if r["initial_output_preview"]:
        lines += ["--- output so far ---", r["initial_output_preview"].rstrip("\n")]
    return "\n".join(lines)

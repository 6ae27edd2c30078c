"""Task family tools: TaskStatus, TaskOutput, TaskInput, TaskStop, TaskList (over
holon.tasks.ops)."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from pydantic import Field

from holon.tasks import ops
from holon.text import head_tail
from holon.tools.base import RenderPolicy, Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput


class TaskIdArgs(ToolArgs):
    task_id: str = Field(
        description="The task_id from ExecCommand's task_handle or TaskList.", min_length=1
    )


class TaskOutputArgs(TaskIdArgs):
    block: bool = Field(True, description="Wait until the task ends or timeout_ms passes.")
    timeout_ms: int | None = Field(
        None,
        ge=0,
        le=600000,
        description="How long to wait when block is true "
        "(default 30000). Not allowed with block=false.",
    )
    max_output_tokens: int | None = Field(
        None, ge=1, le=64000, description="Preview budget in estimated tokens."
    )


class TaskInputArgs(TaskIdArgs):
    nul_ok: ClassVar[frozenset[str]] = frozenset({"input"})  # a NUL byte is valid terminal input
    input: str = Field(
        description="Text to write to the task's stdin or terminal; include a trailing newline "
        "to submit a line. Control characters are typed as such (\u0003 is Ctrl-C on a tty)."
    )
    eof: bool = Field(
        False,
        description="After the input, send end of file: Ctrl-D on a tty, closing stdin otherwise.",
    )
    expect: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="A regular expression to wait for in the output after the input (for "
        "example the program's prompt); the output up to and including the match is returned.",
    )
    timeout_ms: int = Field(
        5000,
        ge=0,
        le=120000,
        description="How long to wait for output after the input; 0 returns at once.",
    )
    settle_ms: int = Field(
        500,
        ge=50,
        le=10000,
        description="Without expect: return once the output has been quiet this long.",
    )
    max_output_tokens: int | None = Field(
        None, ge=1, le=64000, description="Output budget in estimated tokens."
    )


class TaskListArgs(ToolArgs):
    include_finished: bool = Field(False, description="Also list tasks that have ended.")


class _TaskTool(Tool):
    family = "task"

    def rec_or_fail(self, fn: Any, *a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except ops.TaskNotFound:
            raise ToolFailure(
                "task_not_found",
                f"no task {a[1]!r} for this agent",
                details={"field": "task_id", "task_id": a[1]},
                recovery_hint="use TaskList to see this agent's task ids",
            ) from None

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        return env["summary_text"] + "\n" + json.dumps(env["result"], ensure_ascii=False, indent=1)


class TaskStatus(_TaskTool):
    name = "TaskStatus"
    description = (
        "Lifecycle state of a background task (status, command identity, exit status); no output."
    )
    Args = TaskIdArgs

    def run(self, ctx: ToolContext, args: TaskIdArgs) -> ToolOutput:
        task = self.rec_or_fail(ops.status, ctx.home, args.task_id)
        return ToolOutput(f"task {task['task_id']} is {task['status']}", {"task": task})


class TaskOutput(_TaskTool):
    name = "TaskOutput"
    description = (
        "Output of a background task: a bounded head-and-tail preview plus the path of the full "
        "output. Blocks until the task ends (timeout_ms, default 30000) unless block=false."
    )
    guidance: ClassVar[str] = (
        "TaskOutput is for reading a task's output after its task_result arrived, or once when "
        "you truly need it now. To wait for a task, end the turn (Sleep): the task_result message "
        "wakes you. Never loop on TaskOutput or TaskStatus."
    )
    Args = TaskOutputArgs

    def validate(self, ctx: ToolContext, args: TaskOutputArgs) -> None:
        if not args.block and args.timeout_ms is not None:
            raise ToolFailure(
                "invalid_tool_input",
                "timeout_ms only applies when block is true",
                details={"field": "timeout_ms"},
                recovery_hint="drop timeout_ms or set block=true",
            )

    def run(self, ctx: ToolContext, args: TaskOutputArgs) -> ToolOutput:
        timeout = 30000 if args.timeout_ms is None else args.timeout_ms
        res = self.rec_or_fail(
            ops.output,
            ctx.home,
            args.task_id,
            block=args.block,
            timeout_ms=timeout,
            budget_chars=ctx.policy.budget_chars(args.max_output_tokens),
        )
        t = res["task"]
        return ToolOutput(
            f"task {t['task_id']} is {t['status']} (retrieval {res['retrieval_status']})", res
        )

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        r = env["result"]
        t = r["task"]
        lines = [env["summary_text"]]
        if t["exit_status"] is not None:
            lines.append(f"exit status: {t['exit_status']}")
        lines += ["--- output ---", t["output_preview"].rstrip("\n") or "(no output)"]
        if t["artifacts"]:
            lines.append(
                f"[artifacts[0]] full output ({t['artifacts'][0]['bytes']} bytes): "
                f"{t['artifacts'][0]['path']}"
            )
        failure = t["failure_artifact"]
        if failure:
            detail = (failure.get("metadata") or {}).get("detail_path")
            lines.append(
                f"failure ({failure.get('kind')}): {failure.get('summary')}"
                + (f" (details: {detail})" if detail else "")
            )
        return "\n".join(lines)


class TaskInput(_TaskTool):
    name = "TaskInput"
    description = (
        "Write text to the stdin (accepts_input) or terminal (tty) of a running background task "
        "and return what it printed after the input: until `expect` matches, or the output has "
        "been quiet for settle_ms, or timeout_ms passes, or the task ends."
    )
    guidance: ClassVar[str] = (
        "To drive an interactive program (a REPL, a debugger, an installer), start it with "
        "ExecCommand tty=true, then send one input per TaskInput with `expect` set to its prompt "
        "(for example `>>> ` or `\\(Pdb\\) `); the answer comes back in the same call."
    )
    Args = TaskInputArgs

    def validate(self, ctx: ToolContext, args: TaskInputArgs) -> None:
        if args.expect is None:
            return
        try:
            re.compile(args.expect)
        except re.error as exc:
            raise ToolFailure(
                "invalid_tool_input",
                f"expect is not a valid regular expression: {exc}",
                details={"field": "expect"},
                recovery_hint="escape special characters such as ( ) [ ] . * ? with a backslash",
            ) from None

    def run(self, ctx: ToolContext, args: TaskInputArgs) -> ToolOutput:
        res = self.rec_or_fail(
            ops.send_input,
            ctx.home,
            args.task_id,
            args.input,
            eof=args.eof,
            expect=args.expect,
            timeout_ms=args.timeout_ms,
            settle_ms=args.settle_ms,
            budget_chars=ctx.policy.budget_chars(args.max_output_tokens),
        )
        return ToolOutput(res["summary_text"], res)

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        r = env["result"]
        lines = [
            r["summary_text"],
            f"accepted_input: {str(r['accepted_input']).lower()}; "
            f"input_target: {r['input_target']}; bytes_written: {r['bytes_written']}; "
            f"wait_outcome: {r['wait_outcome']}",
        ]
        if r["wait_outcome"] != "not_waited":
            lines += ["--- output after the input ---", r["output"].rstrip("\n") or "(no output)"]
        return "\n".join(lines)


class TaskStop(_TaskTool):
    name = "TaskStop"
    description = (
        "Stop a background task: TERM to its whole process group, then KILL after a grace period."
    )
    mutates = True
    Args = TaskIdArgs

    def run(self, ctx: ToolContext, args: TaskIdArgs) -> ToolOutput:
        res = self.rec_or_fail(ops.stop, ctx.agent, args.task_id)
        return ToolOutput(res.pop("summary_text"), res)


class TaskList(_TaskTool):
    name = "TaskList"
    description = "This agent's background tasks (running ones, or all with include_finished)."
    Args = TaskListArgs

    def run(self, ctx: ToolContext, args: TaskListArgs) -> ToolOutput:
        tasks = ops.list_tasks(ctx.home, include_finished=args.include_finished)
        return ToolOutput(f"{len(tasks)} task(s)", {"tasks": tasks})

    def render(self, env: dict[str, Any], policy: RenderPolicy) -> str:
        lines = [env["summary_text"]]
        for t in env["result"]["tasks"]:
            extra = f" exit {t['exit_status']}" if t["exit_status"] is not None else ""
            what = t["command"]["cmd_preview"] if "command" in t else t.get("summary")
            lines.append(f"{t['task_id']} {t['status']}{extra}: {what}")
        text = "\n".join(lines)
        return head_tail(text, policy.budget_chars())[0]

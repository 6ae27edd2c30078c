"""Test-only tools loaded through HOLON_TOOL_PLUGINS: they count their side effects in a file."""

from __future__ import annotations

import os
import time

from holon.tools.base import Tool, ToolArgs, ToolContext, ToolOutput


class AppendArgs(ToolArgs):
    line: str
    sleep_ms: int = 0
    until_file: str | None = None  # with sleep_ms: stop sleeping once this file exists


class AppendLine(Tool):
    name = "AppendLine"
    description = "Append one line to $SIDEFX_FILE (a test probe that counts side effects)."
    Args = AppendArgs
    mutates = True

    def run(self, ctx: ToolContext, args: AppendArgs) -> ToolOutput:
        with open(os.environ["SIDEFX_FILE"], "a") as fh:
            fh.write(f"{ctx.turn_id}:{ctx.tool_call_id}:{args.line}\n")
            fh.flush()
            os.fsync(fh.fileno())
        deadline = time.monotonic() + args.sleep_ms / 1000
        while time.monotonic() < deadline:
            if args.until_file and os.path.exists(args.until_file):
                break
            time.sleep(0.02)
        return ToolOutput(summary_text=f"appended {args.line}", result={"line": args.line})


class CrashArgs(ToolArgs):
    pass


class Crash(Tool):
    name = "Crash"
    description = "Kill the process running the turn (a test probe for poison messages)."
    Args = CrashArgs

    def run(self, ctx: ToolContext, args: CrashArgs) -> ToolOutput:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

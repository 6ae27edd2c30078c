"""The `holon` command: a lazy click group; a subcommand's module is imported only when it runs."""

from __future__ import annotations

import importlib
import os

import click

from holon import __version__
from holon.cli import failures

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "init": "holon.cli.agents:init_cmd",
    "agents": "holon.cli.agents:agents_cmd",
    "prompt": "holon.cli.prompt:prompt_cmd",
    "run": "holon.cli.prompt:run_cmd",
    "enqueue": "holon.cli.enqueue:enqueue_cmd",
    "tick": "holon.cli.tick:tick_cmd",
    "status": "holon.cli.inspect:status_cmd",
    "transcript": "holon.cli.inspect:transcript_cmd",
    "events": "holon.cli.inspect:events_cmd",
    "briefs": "holon.cli.inspect:briefs_cmd",
    "feed": "holon.cli.feed:feed_cmd",
    "console": "holon.cli.console:console_cmd",
    "pause": "holon.cli.control:pause_cmd",
    "resume": "holon.cli.control:resume_cmd",
    "stop": "holon.cli.control:stop_cmd",
    "wake": "holon.cli.control:wake_cmd",
    "model": "holon.cli.model:model_group",
    "provider": "holon.cli.provider:provider_group",
    "queue": "holon.cli.queue:queue_group",
    "models": "holon.cli.models:models_cmd",
    "keys": "holon.cli.keys:keys_group",
    "tool": "holon.cli.tool:tool_group",
    "task": "holon.cli.task:task_group",
    "work": "holon.cli.work:work_cmd",
    "timer": "holon.cli.timer:timer_cmd",
    "trigger": "holon.cli.trigger:trigger_cmd",
    "watch": "holon.cli.watch:watch_cmd",
    "doctor": "holon.cli.doctor:doctor_cmd",
    "gc": "holon.cli.gc:gc_cmd",
    "debug": "holon.cli.debug:debug_group",
    "memory": "holon.cli.memory:memory_group",
    "schedule": "holon.cli.schedule:schedule_cmd",
    "completion": "holon.cli.completion:completion_cmd",
    "sandbox": "holon.cli.sandbox:sandbox_group",
    "workspace": "holon.cli.workspace:workspace_group",
    "skills": "holon.cli.skills:skills_group",
    "mcp": "holon.cli.mcp:mcp_group",
}


class LazyGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:  # argv that is not UTF-8 arrives with lone surrogates no file can hold
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                from holon.errors import InvalidInput

                raise InvalidInput(
                    f"argument {arg.encode('utf-8', 'backslashreplace').decode()[:200]!r} "
                    "is not valid UTF-8",
                    kind="invalid_utf8",
                    hint="pass arguments in UTF-8",
                ) from None
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # click would turn it into exit 1; a closed pipe is exit 0
            from holon.cli.pipes import ReaderGone

            raise ReaderGone() from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with each command's first sentence whole, never cut with "..."."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=300)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        command = getattr(importlib.import_module(module), attr)
        if os.environ.get("_HOLON_COMPLETE"):  # the shell is asking: ids complete too
            from holon.cli.completion import add_id_completion

            add_id_completion(command)
        return command


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="holon")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """holon: long-lived LLM agents as directories, run by short-lived ticks.

    Every agent lives in a directory (its agent home) with JSONL ledgers, a
    maildir queue, memory and work items. `holon tick` (from cron, launchd,
    systemd or `holon watch`) takes the agent's lock, runs one turn for the
    next queued message, persists everything and exits.

    Exit codes: 0 success; 1 the operation ran and failed; 2 usage or bad
    input; 3 the agent is not runnable (stopped or paused).
    """
    if ctx.invoked_subcommand is None:  # bare `holon`: the help, on stdout, and exit 0
        click.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> int:
    """Run one command through click (holon.cli.entry sends the plain enqueue around it)."""
    from holon.cli.terminal import guard_terminal

    guard_terminal()  # untrusted text reaches a terminal escaped, a pipe byte for byte
    return failures.guarded(lambda: _run(argv))


def _run(argv: list[str] | None) -> int:
    try:
        # color=True: click must not strip escape sequences from a pipe (its default), so a pipe
        # gets every byte; on a terminal the guard above escapes them instead
        rv = cli.main(args=argv, prog_name="holon", standalone_mode=False, color=True)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # `holon task`: its help, as bare holon
        click.echo(exc.ctx.get_help())
        return 0
    except click.UsageError as exc:
        failures.error("usage", _usage_message(exc), _usage_hint(exc.ctx))
        return 2
    except click.ClickException as exc:
        failures.error("error", exc.format_message(), None)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    return rv if isinstance(rv, int) else 0


def _usage_message(exc: click.UsageError) -> str:
    """click's message; an unknown command gets the closest one offered."""
    message = exc.format_message()
    if not message.startswith("No such command") or message.count("'") < 2:
        return message
    import difflib

    close = difflib.get_close_matches(message.split("'")[1], list(COMMANDS), n=1)
    return message + (f" Did you mean {close[0]!r}?" if close else "")


def _usage_hint(ctx: click.Context | None) -> str:
    """The command's usage line and where its help is."""
    if ctx is None:
        return "`holon --help` lists the commands"
    usage = " ".join(ctx.get_usage().split())  # "Usage: holon status [OPTIONS] AGENT"
    return f"{usage.replace('Usage: ', 'usage: ', 1)}; `{ctx.command_path} --help` explains it"

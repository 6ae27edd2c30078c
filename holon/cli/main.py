"""The `holon` command: a lazy click group; a subcommand's module is imported only when it runs."""

from __future__ import annotations

import importlib
import os
import sys

import click

from holon import __version__

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
    "pause": "holon.cli.control:pause_cmd",
    "resume": "holon.cli.control:resume_cmd",
    "stop": "holon.cli.control:stop_cmd",
    "wake": "holon.cli.control:wake_cmd",
    "model": "holon.cli.model:model_group",
    "provider": "holon.cli.provider:provider_group",
    "keys": "holon.cli.keys:keys_group",
    "tool": "holon.cli.tool:tool_group",
    "task": "holon.cli.task:task_group",
    "work": "holon.cli.work:work_cmd",
    "timer": "holon.cli.timer:timer_cmd",
    "trigger": "holon.cli.trigger:trigger_cmd",
    "watch": "holon.cli.watch:watch_cmd",
    "doctor": "holon.cli.doctor:doctor_cmd",
    "debug": "holon.cli.debug:debug_group",
    "memory": "holon.cli.memory:memory_group",
    "schedule": "holon.cli.schedule:schedule_cmd",
    "sandbox": "holon.cli.sandbox:sandbox_group",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="holon")
def cli() -> None:
    """holon: long-lived LLM agents as directories, run by short-lived ticks.

    Every agent lives in a directory (its agent home) with JSONL ledgers, a
    maildir queue, memory and work items. `holon tick` (from cron, launchd,
    systemd or `holon watch`) takes the agent's lock, runs one turn for the
    next queued message, persists everything and exits.

    Exit codes: 0 success; 1 the operation ran and failed; 2 usage or bad
    input; 3 the agent is not runnable (stopped or paused).
    """


def main(argv: list[str] | None = None) -> int:
    from holon.errors import HolonError

    try:
        rv = cli.main(args=argv, prog_name="holon", standalone_mode=False)
    except HolonError as exc:
        _error(exc.kind, exc.message, exc.hint)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_broken_pipe()
        return 0
    except Exception as exc:  # a bug: say so plainly, trace only on request
        if os.environ.get("HOLON_DEBUG") == "1":
            raise
        _error(
            "internal_error",
            f"{type(exc).__name__}: {exc}",
            "run again with HOLON_DEBUG=1 for a traceback",
        )
        return 1
    return rv if isinstance(rv, int) else 0


def _error(kind: str, message: str, hint: str | None) -> None:
    click.echo(f"holon: {kind}: {message}", err=True)
    if hint:
        click.echo(f"hint: {hint}", err=True)


def _silence_broken_pipe() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass

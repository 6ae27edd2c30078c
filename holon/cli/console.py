"""`holon console [AGENT]`: the operator console (a full-screen terminal UI). Textual is imported
only when the console runs, never for `--help` or any other command."""

from __future__ import annotations

import sys

import click

from holon.feed.present import LEVELS


@click.command("console")
@click.argument("agent", required=False)
@click.option("--model", help="Model ref (provider/model) for the prompts sent and the ticks run.")
@click.option(
    "--display",
    "level",
    type=click.Choice(list(LEVELS)),
    default="info",
    show_default=True,
    help="What the conversation shows at first (`/display` changes it).",
)
@click.option(
    "--no-alt-screen",
    is_flag=True,
    help="Draw inline, below the prompt, in the terminal's normal scrollback (the last screen "
    "stays there after quitting).",
)
def console_cmd(agent: str | None, model: str | None, level: str, no_alt_screen: bool) -> None:
    """The operator console: sit with AGENT (default `main`) in one terminal.

    The conversation shows your messages and the agent's briefs, read from
    its ledgers (whoever wrote them); `/display verbose` (or 4) adds
    progress and tool activity, `/display debug` (5) every trace record.
    Enter sends the composer's text as an operator prompt, admitted as
    `holon prompt` admits it; the console then runs `holon tick AGENT
    --until-idle` unless another process (`holon watch`, cron) holds the
    agent's lock, in which case it follows that process's progress. Work
    that becomes due while the console is open (a task's result, a timer)
    is ticked the same way.
    Ctrl-C interrupts the running turn (it resumes at the next tick) and
    never stops background tasks. F1 (or /help) lists the overlays:
    transcript, tasks with their output and input, child agents, workspace
    and sandbox, debug prompt, events, and agents. They open above the
    conversation and the composer stays available; Esc closes an overlay.
    Ctrl-Q or /quit leaves, exit 0: the agent's tasks, timers, children and
    a turn still running go on without the console.
    """
    from holon.errors import UsageError
    from holon.home.init import DEFAULT_AGENT_ID
    from holon.home.registry import resolve

    home = resolve(agent or DEFAULT_AGENT_ID)
    if not (sys.stdin and sys.stdin.isatty() and sys.stdout and sys.stdout.isatty()):
        raise UsageError(
            "holon console needs a terminal on stdin and stdout",
            kind="not_a_terminal",
            hint="run it in a terminal; from a script use `holon prompt` and `holon feed`",
        )
    from holon.cli.terminal import unguarded
    from holon.console.app import ConsoleApp

    app = ConsoleApp(home, model=model, level=level)
    with unguarded():  # the app draws the screen; it escapes untrusted text itself
        app.run(inline=no_alt_screen, inline_no_clear=True)
    if app.detached is not None:
        click.echo(
            f"holon: the turn goes on in `holon tick` (pid {app.detached}); "
            f"`holon status {app.home.agent_id}` shows it",
            err=True,
        )
    click.get_current_context().exit(app.return_code or 0)

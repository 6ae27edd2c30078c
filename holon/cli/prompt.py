"""`holon prompt` (enqueue an operator prompt and tick until settled) and `holon run` (one-shot)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from holon.cli.inputs import read_prompt_text
from holon.cli.output import emit_json
from holon.vocab import DEFAULT_PRIORITY, PRIORITIES

PROGRESS_POLL_S = 0.1  # how often `holon prompt -v` looks for this turn's new records


@click.command("prompt")
@click.argument("agent")
@click.argument("text", required=False)
@click.option("--no-wait", is_flag=True, help="Only enqueue; a later tick runs the turn.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document with the turn result."
)
@click.option(
    "--model",
    help="Model ref (provider/model) for this prompt and the work it causes (its follow-ups, "
    "timer wakes and task results); the ticks this command runs use it too.",
)
@click.option(
    "--priority", type=click.Choice(PRIORITIES), default=DEFAULT_PRIORITY, show_default=True
)
@click.option(
    "--level",
    type=click.Choice(["info", "verbose", "debug"]),
    default="info",
    show_default=True,
    help="While waiting, print this turn's operator records on stderr: verbose shows progress "
    "(assistant previews, requested tools, tool rows), debug every trace record too.",
)
@click.option("-v", "verbose", is_flag=True, help="Same as --level verbose.")
def prompt_cmd(
    agent: str,
    text: str | None,
    no_wait: bool,
    as_json: bool,
    model: str | None,
    priority: str,
    level: str,
    verbose: bool,
) -> None:
    """Send TEXT (or `-` for stdin) to AGENT as an operator prompt.

    Piped input comes first, then TEXT on a line of its own, as llm reads
    it: `cat notes.txt | holon prompt AGENT "summarise this"`.

    Unless --no-wait, runs ticks until the agent has settled the prompt and
    prints the result brief (exit 1 if the turn failed).
    """
    from holon.home.registry import resolve
    from holon.ops import prompt as operator

    home = resolve(agent)
    body = read_prompt_text(text)
    level = "verbose" if verbose and level == "info" else level
    with _progress(home, level if not no_wait else "info") as on_admitted:
        outcome = operator.prompt(
            home, body, wait=not no_wait, model=model, priority=priority, on_admitted=on_admitted
        )
    _finish(outcome, as_json)


@contextmanager
def _progress(home, level: str) -> Iterator[Callable[[str], None] | None]:
    """At verbose or debug, a thread prints the prompt's own records on stderr while it waits
    (its result, on stdout, is not repeated)."""
    if level == "info":
        yield None
        return
    import threading

    from holon.feed.present import line
    from holon.feed.reader import MessageScope

    scope, done = MessageScope(home, level), threading.Event()

    def show() -> None:
        for record in scope.poll():
            if record["visibility"] not in ("turn_result", "work_done"):
                click.echo(line(record), err=True)

    def follow() -> None:
        while not done.wait(PROGRESS_POLL_S):
            show()

    thread = threading.Thread(target=follow, daemon=True)
    try:
        yield lambda message_id: (setattr(scope, "message_id", message_id), thread.start())
    finally:
        done.set()
        if thread.is_alive():
            thread.join()
        show()


@click.command("run")
@click.argument("text", required=False)
@click.option(
    "--agent", "agent_id", help="Run as this public agent instead of a temporary private one."
)
@click.option("--create-agent", is_flag=True, help="Create --agent on first use.")
@click.option("--keep", is_flag=True, help="Keep the temporary agent home and print its path.")
@click.option(
    "--no-wait-for-tasks",
    is_flag=True,
    help="Return when the turn ends, without waiting for the background commands it started. "
    "A temporary agent with a command still running is kept, not removed, and its path is "
    "printed.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document with the run result."
)
@click.option("--model", help="Model ref (provider/model).")
@click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Bind the agent to this directory before the turn (its file and shell tools run there); "
    "without it, --agent keeps its current workspace.",
)
def run_cmd(
    text: str | None,
    agent_id: str | None,
    create_agent: bool,
    keep: bool,
    no_wait_for_tasks: bool,
    as_json: bool,
    model: str | None,
    workspace: Path | None,
) -> None:
    """One-shot run: TEXT (or stdin) to a temporary private agent, or to --agent.

    Piped input comes first, then TEXT on a line of its own, as llm reads
    it: `git diff | holon run "review this change"`.

    Waits for the turn to end. If the turn started background commands (ones
    still running when their yield time ran out), waits for them too, then runs
    the turns their results cause, and prints the text of the last turn.

    The temporary agent lives in $HOLON_HOME/run/ (hidden from every other
    agent's commands) and is removed at the end, unless --keep. It is never
    removed while a command it started is still running (after
    --no-wait-for-tasks, Ctrl-C or an error): it is kept, and its path is
    printed with how to finish it.
    """
    from holon.ops import prompt as operator

    body = read_prompt_text(text)
    outcome = operator.run_once(
        body,
        agent_id=agent_id,
        create=create_agent,
        keep=keep,
        model=model,
        wait_for_tasks=not no_wait_for_tasks,
        on_kept=lambda notice: click.echo(f"note: {notice}", err=True),  # before the error line
        workspace=workspace,
    )
    if not as_json:
        for task in outcome.get("tasks", []):
            ended = "" if task["exit_status"] is None else f" (exit {task['exit_status']})"
            click.echo(f"task {task['task_id']}: {task['status']}{ended}", err=True)
        if outcome.get("notice"):
            click.echo(f"holon: {outcome['notice']}", err=True)
    _finish(outcome, as_json)


def _finish(outcome: dict, as_json: bool) -> None:
    ctx = click.get_current_context()
    if as_json:
        emit_json(outcome)
    elif outcome.get("status") == "queued":
        click.echo(f"queued {outcome['message_id']} for {outcome['agent_id']}")
    elif outcome.get("status") == "failed":
        click.echo(outcome.get("final_text") or "", nl=bool(outcome.get("final_text")))
        summary = (outcome.get("failure_artifact") or {}).get("summary", "turn failed")
        click.echo(f"holon: turn_failed: {summary}", err=True)
    elif outcome.get("status") == "deferred":
        artifact = outcome.get("failure_artifact") or {}
        summary = artifact.get("summary", "the provider was unavailable")
        click.echo(f"holon: turn_deferred: {summary}", err=True)
    elif outcome.get("status") == "held":
        click.echo(f"holon: {outcome['error']}", err=True)
    elif outcome.get("status") in ("paused", "stopped"):
        click.echo(
            f"holon: agent_not_runnable: agent {outcome['agent_id']} is {outcome['status']}; "
            f"the prompt {outcome['message_id']} is queued, not run",
            err=True,
        )
    elif outcome.get("status") == "pending":
        click.echo(
            f"holon: prompt_pending: the prompt {outcome['message_id']} is queued, not settled yet",
            err=True,
        )
    else:
        click.echo(outcome.get("final_text", ""))
    if outcome.get("hint") and not as_json:
        click.echo(f"hint: {outcome['hint']}", err=True)
    ctx.exit(outcome.get("exit_code", 0))

"""`holon task list|status|output|input|stop`: operate an agent's background tasks."""

from __future__ import annotations

import math
from typing import Any

import click

from holon.cli import failures
from holon.cli.output import emit_json


class FiniteRange(click.FloatRange):
    """A float option within [min, max]; NaN (which every range comparison lets through) and
    infinities are refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        result = super().convert(value, param, ctx)
        if not math.isfinite(result):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return result


@click.group("task")
def task_group() -> None:
    """Inspect and control an agent's background command tasks."""


def _home(agent: str):
    from holon.home.registry import resolve

    return resolve(agent)


def _run(fn, home, task_id, *a, **kw):
    from holon.errors import InvalidInput
    from holon.ids import quote
    from holon.tasks.ops import TaskNotFound

    try:
        return fn(home, task_id, *a, **kw)
    except TaskNotFound:
        raise InvalidInput(
            f"no task {quote(task_id)}", kind="unknown_task", hint="see `holon task list AGENT`"
        ) from None


@task_group.command("list")
@click.argument("agent")
@click.option("--running", is_flag=True, help="Only tasks that have not ended.")
@click.option("--json", "as_json", is_flag=True, help="Task snapshots as JSON.")
def list_cmd(agent: str, running: bool, as_json: bool) -> None:
    """List AGENT's tasks, oldest first."""
    from holon.tasks import ops

    tasks = ops.list_tasks(_home(agent), include_finished=not running)
    if as_json:
        emit_json(tasks)
        return
    for t in tasks:
        if t["status"] == "corrupt":
            click.echo(f"{t['task_id']}  corrupt  {t['error']['message']}")
            continue
        code = f" exit {t['exit_status']}" if t["exit_status"] is not None else ""
        what = t["command"]["cmd_preview"] if "command" in t else t.get("summary")  # a child's
        click.echo(f"{t['task_id']}  {t['status']}{code}  {what}")


@task_group.command("status")
@click.argument("agent")
@click.argument("task_id")
@click.option("--json", "as_json", is_flag=True, help="The task snapshot as JSON.")
def status_cmd(agent: str, task_id: str, as_json: bool) -> None:
    """Show one task's lifecycle state."""
    from holon.tasks import ops

    t = _run(ops.status, _home(agent), task_id)
    if as_json:
        emit_json(t)
        return
    click.echo(
        f"{t['task_id']}: {t['status']}"
        + (f" (exit {t['exit_status']})" if t["exit_status"] is not None else "")
        + (f"\ncommand: {t['command']['cmd']}" if "command" in t else "")
        + (f"\nchild: {t['child_supervision']['child_agent_id']}" if "label" in t else "")
    )


@task_group.command("output")
@click.argument("agent")
@click.argument("task_id")
@click.option(
    "--wait",
    "timeout",
    type=FiniteRange(0, 3600),
    default=0.0,
    help="Seconds to wait for the task to end (at most 3600).",
)
@click.option("--json", "as_json", is_flag=True, help="The TaskOutputResult as JSON.")
def output_cmd(agent: str, task_id: str, timeout: float, as_json: bool) -> None:
    """Print a task's output (head and tail when large; the full output path is listed)."""
    from holon.tasks import ops

    res = _run(
        ops.output,
        _home(agent),
        task_id,
        block=timeout > 0,
        timeout_ms=int(timeout * 1000),
        budget_chars=32000,
    )
    if as_json:
        emit_json(res)
        return
    click.echo(res["task"]["output_preview"], nl=False)


@task_group.command("input")
@click.argument("agent")
@click.argument("task_id")
@click.argument("text")
@click.option("--no-newline", is_flag=True, help="Do not append a newline to TEXT.")
@click.option("--eof", is_flag=True, help="Then send end of file (Ctrl-D, or close stdin).")
@click.option(
    "--expect",
    metavar="REGEX",
    help="Wait until the output after TEXT matches REGEX (for example the prompt).",
)
@click.option(
    "--timeout",
    type=FiniteRange(0, 120),
    default=5.0,
    show_default=True,
    help="Seconds to wait for output after TEXT; 0 returns at once.",
)
@click.option(
    "--settle",
    type=FiniteRange(0.05, 10),
    default=0.5,
    show_default=True,
    help="Without --expect: stop once the output has been quiet this many seconds.",
)
@click.option("--json", "as_json", is_flag=True, help="The TaskInputResult as JSON.")
def input_cmd(
    agent: str,
    task_id: str,
    text: str,
    no_newline: bool,
    eof: bool,
    expect: str | None,
    timeout: float,
    settle: float,
    as_json: bool,
) -> None:
    """Type TEXT into a running task's stdin or terminal and print what it printed next.

    Exit 1 when the input was not accepted, or when --expect did not match."""
    import re

    from holon.errors import InvalidInput
    from holon.tasks import ops

    if expect is not None:
        import warnings

        try:
            with warnings.catch_warnings():  # "possible nested set" and the like: not errors
                warnings.simplefilter("ignore")
                re.compile(expect)
        except re.error as exc:
            raise InvalidInput(
                f"--expect is not a valid regular expression: {exc}",
                kind="invalid_pattern",
                hint="escape special characters such as ( ) [ ] . * ? with a backslash",
            ) from None
    res = _run(
        ops.send_input,
        _home(agent),
        task_id,
        text if no_newline else text + "\n",
        eof=eof,
        expect=expect,
        timeout_ms=int(timeout * 1000),
        settle_ms=int(settle * 1000),
        budget_chars=64000,
    )
    if as_json:
        emit_json(res)
    elif res["output"]:
        click.echo(res["output"], nl=False)
    failure = _input_failure(agent, task_id, res, expect)
    if as_json:
        pass
    elif failure is None:
        click.echo(f"note: {res['summary_text']}", err=True)  # a success: no error line
    else:
        failures.error(failure[0], res["summary_text"], failure[1])
    click.get_current_context().exit(0 if failure is None else 1)


def _input_failure(agent: str, task_id: str, res: dict, expect: str | None) -> tuple | None:
    """(kind, hint) of an input that was not accepted, or whose --expect did not match."""
    status = (res.get("task") or {}).get("status")
    if not res["accepted_input"] and status not in (None, "running"):
        return "task_ended", f"the task is {status}; `holon task output {agent} {task_id}`"
    if not res["accepted_input"]:
        return (
            "input_refused",
            f"`holon task status {agent} {task_id}` shows whether it takes input",
        )
    if expect is None or res["wait_outcome"] == "matched":
        return None
    if res["wait_outcome"] == "task_ended":
        return (
            "task_ended",
            f"it ended before printing a match: `holon task output {agent} {task_id}`",
        )
    return (
        "expect_timeout",
        f"raise --timeout, or check --expect against `holon task output {agent} {task_id}`",
    )


@task_group.command("stop")
@click.argument("agent")
@click.argument("task_id")
@click.option("--json", "as_json", is_flag=True, help="The stop receipt as JSON.")
def stop_cmd(agent: str, task_id: str, as_json: bool) -> None:
    """Stop a task: TERM its process group, KILL after a grace period."""
    from holon.agent.handle import Agent
    from holon.tasks import ops

    res = _run(ops.stop, Agent(_home(agent)), task_id)  # this command's one handle
    emit_json(res) if as_json else click.echo(res["summary_text"])

"""`holon pause|resume|stop|wake AGENT`: lifecycle control."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


def _command(name: str, doc: str):
    @click.command(name, help=doc)
    @click.argument("agent")
    @click.option("--json", "as_json", is_flag=True, help="Print the change as JSON.")
    def cmd(agent: str, as_json: bool) -> None:
        from holon.agent import control
        from holon.home.registry import resolve

        result = getattr(control, name)(resolve(agent))
        if as_json:
            emit_json(result)
        else:
            click.echo(f"{result['agent_id']}: {result['previous_status']} -> {result['status']}")

    return cmd


pause_cmd = _command(
    "pause", "Pause AGENT: messages are still admitted but no turn runs until resume."
)
resume_cmd = _command(
    "resume", "Resume a paused or stopped AGENT; the next tick processes its queue."
)
stop_cmd = _command(
    "stop", "Stop AGENT durably: new external messages are refused until `holon resume`."
)
wake_cmd = _command(
    "wake", "Wake a sleeping AGENT. Refuses to cross `stopped` or `paused` (use resume)."
)

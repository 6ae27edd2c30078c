"""`holon doctor [--json]`: scheduler, last ticks, due work, dead letters, stale locks, interrupted
tasks."""

from __future__ import annotations

import click


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every finding.")
def doctor_cmd(as_json: bool) -> None:
    """Check the installation and every agent; each problem comes with the command that fixes it.
    Exit 1 when a finding needs attention."""
    from holon.cli.output import emit_json
    from holon.ops import doctor

    report = doctor.run()
    if as_json:
        emit_json(report)
    else:
        for f in report["findings"]:
            click.echo(
                f"[{f['status']}] {f['message']}"
                + (f"\n       fix: {f['fix']}" if f["fix"] else "")
            )
    click.get_current_context().exit(0 if report["status"] == "ok" else 1)

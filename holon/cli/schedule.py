"""`holon schedule cron|launchd|systemd`: print (or with --install, install) what runs `holon tick
--all`."""

from __future__ import annotations

import click

EVERY = click.option(
    "--every", default="1m", show_default=True, help="How often to tick: 1m, 5m, 1h."
)
INSTALL = click.option("--install", is_flag=True, help="Install it instead of only printing it.")


@click.group("schedule")
def schedule_cmd() -> None:
    """Scheduler entries for `holon tick --all` using the absolute path of this holon."""


@schedule_cmd.command("cron")
@EVERY
@INSTALL
def cron_cmd(every: str, install: bool) -> None:
    """The crontab line (installs into your crontab with --install)."""
    from holon.ops import schedule, schedule_install

    line = schedule.cron_line(schedule.holon_executable(), every)
    click.echo(schedule_install.cron(line) if install else line)


@schedule_cmd.command("launchd")
@EVERY
@INSTALL
def launchd_cmd(every: str, install: bool) -> None:
    """The launchd agent plist (written to ~/Library/LaunchAgents with --install)."""
    from holon.ops import schedule, schedule_install

    plist = schedule.launchd_plist(schedule.holon_executable(), every)
    click.echo(schedule_install.launchd(plist) if install else plist, nl=install)


@schedule_cmd.command("systemd")
@EVERY
@INSTALL
def systemd_cmd(every: str, install: bool) -> None:
    """The systemd user service and timer (written and enabled with --install)."""
    from holon.ops import schedule, schedule_install

    units = schedule.systemd_units(schedule.holon_executable(), every)
    if install:
        click.echo(schedule_install.systemd(units))
        return
    for name, text in units.items():
        click.echo(f"# {name}\n{text}")

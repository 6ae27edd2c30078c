"""`holon schedule cron|launchd|systemd`: print, install or remove what runs `holon tick --all`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from holon.ops.schedule import Runner

EVERY = click.option(
    "--every",
    default="1m",
    show_default=True,
    help="How often to tick. cron: 1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m, 1h 2h 3h 4h 6h 8h 12h "
    "or 1d; systemd and launchd: any interval of a minute or more (90m, 5h, 2d).",
)
INSTALL = click.option(
    "--install",
    is_flag=True,
    help="Install it (replacing this HOLON_HOME's entry) instead of printing it.",
)
UNINSTALL = click.option("--uninstall", is_flag=True, help="Remove this HOLON_HOME's entry.")


@click.group("schedule")
def schedule_cmd() -> None:
    """Scheduler entries that run `holon tick --all --log` for the HOLON_HOME in effect.

    Each entry works as printed under the scheduler's bare environment: it runs this holon by
    its absolute path (or `<python> -m holon`, with PYTHONPATH if that python needs it) and sets
    HOLON_HOME and PATH. The tick stays silent when it succeeds and prints its report on stderr
    when it fails (cron mails it, systemd keeps it in the journal); every run that did something
    is logged in $HOLON_HOME/logs/tick.log.

    Each HOLON_HOME gets its own entry. The crontab line ends with the tag `# holon tick:
    HOLON_HOME=<path>`. The systemd units are holon-tick.service and .timer, and the launchd
    label is dev.holon.tick; for a HOLON_HOME other than the default, a short hash of its path
    is added to these names. --install and --uninstall change only this HOLON_HOME's entry, and
    running either twice does no harm.
    """


def _runner(install: bool, uninstall: bool) -> Runner:
    from holon.errors import UsageError
    from holon.ops import schedule

    if install and uninstall:
        raise UsageError(
            "--install and --uninstall cannot be used together",
            kind="conflicting_options",
            hint="pass one of them; without either the entry is only printed",
        )
    return schedule.runner()


@schedule_cmd.command("cron")
@EVERY
@INSTALL
@UNINSTALL
def cron_cmd(every: str, install: bool, uninstall: bool) -> None:
    """Print the crontab line.

    --install adds it to your crontab, replacing this HOLON_HOME's older line; --uninstall removes
    it. Both need the `crontab` command.
    """
    from holon.ops import schedule, schedule_install

    r = _runner(install, uninstall)
    if uninstall:
        click.echo(schedule_install.cron_uninstall(r))
        return
    line = schedule.cron_line(r, every)
    click.echo(schedule_install.cron_install(r, line) if install else line)


@schedule_cmd.command("launchd")
@EVERY
@INSTALL
@UNINSTALL
def launchd_cmd(every: str, install: bool, uninstall: bool) -> None:
    """Print the launchd agent plist.

    --install writes it to ~/Library/LaunchAgents and loads it; --uninstall unloads and removes
    it (macOS only). What the tick prints when it fails goes to
    $HOLON_HOME/logs/launchd.stderr.log.
    """
    from holon.ops import schedule, schedule_install

    r = _runner(install, uninstall)
    if uninstall:
        click.echo(schedule_install.launchd_uninstall(r))
        return
    plist = schedule.launchd_plist(r, every)
    click.echo(schedule_install.launchd_install(r, plist) if install else plist, nl=install)


@schedule_cmd.command("systemd")
@EVERY
@INSTALL
@UNINSTALL
def systemd_cmd(every: str, install: bool, uninstall: bool) -> None:
    """Print the systemd user service and timer.

    --install writes them to ~/.config/systemd/user and enables the timer; exit 1 when the
    timer is not active then (no systemctl or no user bus: it says how to enable it);
    --uninstall disables and removes them (Linux only). What the tick prints when it
    fails goes to the journal.
    """
    from holon.ops import schedule, schedule_install

    r = _runner(install, uninstall)
    if uninstall:
        click.echo(schedule_install.systemd_uninstall(r))
        return
    units = schedule.systemd_units(r, every)
    if install:
        click.echo(schedule_install.systemd_install(r, units))
        why = schedule_install.systemd_inactive(r)
        if why is not None:  # written but not running: nothing will tick
            from holon.errors import OperationFailed

            raise OperationFailed(
                f"the timer is not active: {why}",
                kind="schedule_not_active",
                hint="enable it as the lines above say (a user bus is needed: log in, or "
                "`loginctl enable-linger`), or use `holon schedule cron --install`",
            )
        return
    for name, text in units.items():
        click.echo(f"# {name}\n{text}")

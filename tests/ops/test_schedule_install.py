"""holon.ops.schedule_install: --install writes the entry; never the real user's crontab or units.

PATH holds only fake `crontab`/`systemctl`/`holon` executables (a file stands in for the crontab);
HOME and XDG_CONFIG_HOME point into tmp_path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes import FAKE_CRONTAB, FAKE_SYSTEMCTL, executable
from scenario_helpers import cli

from holon.errors import OperationFailed
from holon.ops import schedule, schedule_install


def _crontab() -> Path:
    return Path(os.environ["FAKE_CRONTAB"])


def test_cron_install_replaces_only_the_tick_line(sandbox):
    executable(sandbox / "crontab", FAKE_CRONTAB)
    _crontab().write_text("0 3 * * * /usr/bin/backup\n*/5 * * * * /old/holon tick --all\n")
    line = schedule.cron_line(str(sandbox / "holon"), "1m")
    assert schedule_install.cron(line) == f"installed in crontab: {line}"
    assert _crontab().read_text() == f"0 3 * * * /usr/bin/backup\n{line}\n"
    schedule_install.cron(line)  # idempotent
    assert _crontab().read_text().count("tick --all") == 1


def test_cron_install_into_an_empty_crontab(sandbox):
    executable(sandbox / "crontab", FAKE_CRONTAB)
    schedule_install.cron("* * * * * /x/holon tick --all")
    assert _crontab().read_text() == "* * * * * /x/holon tick --all\n"


def test_cron_install_without_crontab(sandbox):
    with pytest.raises(OperationFailed) as err:
        schedule_install.cron("* * * * * /x/holon tick --all")
    assert err.value.kind == "no_crontab" and "systemd --install" in err.value.hint


def test_cron_install_refused_by_crontab(sandbox, monkeypatch):
    executable(sandbox / "crontab", FAKE_CRONTAB)
    monkeypatch.setenv("FAKE_CRONTAB_REFUSE", "1")
    with pytest.raises(OperationFailed) as err:
        schedule_install.cron("* * * * * /x/holon tick --all")
    assert err.value.kind == "crontab_failed" and "bad minute" in err.value.message
    assert not _crontab().exists()


def test_launchd_install_writes_the_plist(sandbox):
    plist = schedule.launchd_plist("/x/holon")
    out = schedule_install.launchd(plist)
    path = schedule.launchd_path()
    assert path.read_text() == plist
    assert str(path).startswith(os.environ["HOME"])
    assert out == f"wrote {path}\nload it with: launchctl load -w {path}"


def test_systemd_install_without_systemctl_explains_how_to_enable(sandbox):
    units = schedule.systemd_units("/x/holon")
    out = schedule_install.systemd(units)
    base = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user"
    assert {p.name: p.read_text() for p in base.iterdir()} == units
    assert "enable it with: systemctl --user daemon-reload" in out
    assert out.endswith("holon-tick.timer")


def test_systemd_install_enables_the_timer(sandbox, monkeypatch):
    executable(sandbox / "systemctl", FAKE_SYSTEMCTL)
    out = schedule_install.systemd(schedule.systemd_units("/x/holon"))
    assert out.endswith("\nenabled holon-tick.timer")
    log = Path(os.environ["FAKE_SYSTEMCTL_LOG"]).read_text()
    assert log == "--user enable --now holon-tick.timer\n"
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    assert "enable it with:" in schedule_install.systemd(schedule.systemd_units("/x/holon"))


def test_schedule_cron_install_command(sandbox):
    executable(sandbox / "crontab", FAKE_CRONTAB)
    code, out, err = cli("schedule", "cron", "--every", "5m", "--install")
    assert code == 0, err
    exe = sandbox / "holon"
    assert out == f"installed in crontab: */5 * * * * {exe} tick --all >/dev/null 2>&1\n"
    assert _crontab().read_text() == f"*/5 * * * * {exe} tick --all >/dev/null 2>&1\n"
    (sandbox / "crontab").unlink()
    code, _, err = cli("schedule", "cron", "--install")
    assert code == 1 and "holon: no_crontab: crontab is not installed" in err


def test_schedule_systemd_and_launchd_install_commands(sandbox):
    code, out, _ = cli("schedule", "systemd", "--every", "3m", "--install")
    assert code == 0 and out.startswith("wrote ")
    timer = schedule.systemd_dir() / "holon-tick.timer"
    assert "OnUnitActiveSec=180s" in timer.read_text()
    code, out, _ = cli("schedule", "launchd", "--install")
    assert code == 0 and schedule.launchd_path().exists()

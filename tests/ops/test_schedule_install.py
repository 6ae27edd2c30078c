"""holon.ops.schedule_install and schedule_found.installed_entries: --install/--uninstall touch
only the entry of the HOLON_HOME in effect, twice is once; never the real user's crontab or
units.

PATH holds only fake `crontab`/`systemctl`/`launchctl`/`holon` executables (a file stands in for
the crontab, a log for systemctl and launchctl); HOME and XDG_CONFIG_HOME point into tmp_path.
"""

from __future__ import annotations

import os
import plistlib
import sys
from pathlib import Path

import pytest
from fakes import FAKE_CRONTAB, FAKE_SYSTEMCTL, executable
from scenario_helpers import cli

from holon.errors import OperationFailed, UsageError
from holon.ops import schedule, schedule_found, schedule_install
from holon.ops.schedule import Runner


def _crontab() -> Path:
    return Path(os.environ["FAKE_CRONTAB"])


def _calls() -> list[str]:
    log = Path(os.environ["FAKE_SYSTEMCTL_LOG"])
    return log.read_text().splitlines() if log.exists() else []


def runner(sandbox: Path, home: Path) -> Runner:
    env = (("HOLON_HOME", str(home)), ("PATH", f"{sandbox}:/usr/local/bin:/usr/bin:/bin"))
    return Runner((str(sandbox / "holon"),), env, home)


@pytest.fixture
def homes(sandbox, tmp_path, monkeypatch):
    """Two HOLON_HOMEs' runners; the first is the one in effect."""
    monkeypatch.setenv("HOLON_HOME", str(tmp_path / "one"))
    return runner(sandbox, tmp_path / "one"), runner(sandbox, tmp_path / "two")


@pytest.fixture
def crontab(sandbox) -> Path:
    """A fake `crontab` on PATH; returns the file that stands in for the crontab."""
    executable(sandbox / "crontab", FAKE_CRONTAB)
    return _crontab()


@pytest.fixture
def linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")


# -- cron ---------------------------------------------------------------------------------------


def test_cron_install_replaces_only_this_homes_entry(sandbox, crontab, homes):
    one, two = homes
    exe = sandbox / "holon"
    other_home = schedule.cron_line(two, "5m")
    keep = [
        "MAILTO=me@example.org",
        "0 3 * * * /usr/bin/backup",
        other_home,
        "*/5 * * * * /other/holon tick --all",  # another holon
        f"* * * * * HOLON_HOME=/x {exe} tick --all",  # carries its own HOLON_HOME
    ]
    _crontab().write_text(
        "\n".join([*keep[:2], f"* * * * * {exe} tick --all >/dev/null 2>&1"] + keep[2:]) + "\n"
    )
    line = schedule.cron_line(one)
    assert schedule_install.cron_install(one, line) == f"installed in crontab: {line}"
    assert _crontab().read_text() == "\n".join([*keep, line]) + "\n"
    schedule_install.cron_install(one, line)  # idempotent
    assert _crontab().read_text() == "\n".join([*keep, line]) + "\n"
    faster = schedule.cron_line(one, "2m")
    schedule_install.cron_install(one, faster)  # a new interval replaces the entry
    assert _crontab().read_text() == "\n".join([*keep, faster]) + "\n"


def test_cron_install_replaces_the_unrunnable_line_of_older_holons(sandbox, crontab, homes):
    import holon

    one, _ = homes
    main = Path(holon.__file__).with_name("__main__.py")
    _crontab().write_text(f"* * * * * {main} tick --all >/dev/null 2>&1\n")
    line = schedule.cron_line(one)
    schedule_install.cron_install(one, line)
    assert _crontab().read_text() == f"{line}\n"


def test_cron_two_homes_each_have_one_entry(sandbox, crontab, homes):
    one, two = homes
    for r in (one, two, one, two):
        schedule_install.cron_install(r, schedule.cron_line(r))
    lines = _crontab().read_text().splitlines()
    assert lines == [schedule.cron_line(one), schedule.cron_line(two)]
    out = schedule_install.cron_uninstall(one)
    assert out == f"removed from crontab: {lines[0]}"
    assert _crontab().read_text() == f"{lines[1]}\n"
    assert schedule_install.cron_uninstall(one) == (
        f"no crontab entry for HOLON_HOME={one.home}: nothing to remove"
    )
    schedule_install.cron_uninstall(two)
    assert _crontab().read_text() == ""


def test_cron_install_into_no_crontab(sandbox, crontab, homes):
    one, _ = homes
    assert not _crontab().exists()
    schedule_install.cron_install(one, schedule.cron_line(one))
    assert _crontab().read_text() == schedule.cron_line(one) + "\n"


def test_cron_without_crontab(sandbox, homes):
    one, _ = homes
    for call in (
        lambda: schedule_install.cron_install(one, "x"),
        lambda: schedule_install.cron_uninstall(one),
    ):
        with pytest.raises(OperationFailed) as err:
            call()
        assert err.value.kind == "no_crontab" and "systemd --install" in err.value.hint


def test_cron_install_refused_by_crontab(sandbox, crontab, homes, monkeypatch):
    one, _ = homes
    monkeypatch.setenv("FAKE_CRONTAB_REFUSE", "1")
    with pytest.raises(OperationFailed) as err:
        schedule_install.cron_install(one, schedule.cron_line(one))
    assert err.value.kind == "crontab_failed" and "bad minute" in err.value.message
    assert not _crontab().exists()


def test_an_unreadable_crontab_is_never_overwritten(sandbox, homes):
    one, _ = homes
    executable(
        sandbox / "crontab",
        "#!/bin/sh\n[ \"$1\" = -l ] && echo 'permission denied' >&2\n"
        '[ "$1" = - ] && cat > "$FAKE_CRONTAB"\nexit 1\n',
    )
    with pytest.raises(OperationFailed) as err:
        schedule_install.cron_install(one, schedule.cron_line(one))
    assert err.value.kind == "crontab_failed" and "permission denied" in err.value.message
    assert not _crontab().exists()


# -- systemd ------------------------------------------------------------------------------------


def test_systemd_install_without_systemctl_explains_how_to_enable(sandbox, homes, linux):
    one, two = homes
    units = schedule.systemd_units(one)
    out = schedule_install.systemd_install(one, units)
    base = schedule.systemd_dir()
    assert {p.name: p.read_text() for p in base.iterdir()} == units
    name = schedule.systemd_name(one.home)
    assert out.splitlines() == [
        f"wrote {base / name}.service",
        f"wrote {base / name}.timer",
        "not enabled: systemctl is not installed",
        f"enable it with: systemctl --user daemon-reload && systemctl --user enable --now "
        f"{name}.timer",
        f"note: {schedule_install.LINGER}",
    ]
    assert schedule_install.systemd_install(one, units) == out  # idempotent
    schedule_install.systemd_install(two, schedule.systemd_units(two))
    assert len(list(base.iterdir())) == 4  # each home its own units
    assert schedule_install.systemd_uninstall(one).splitlines() == [
        f"removed {base / name}.timer",
        f"removed {base / name}.service",
    ]
    assert sorted(p.name for p in base.iterdir()) == sorted(schedule.systemd_units(two))
    assert "nothing to remove" in schedule_install.systemd_uninstall(one)


def test_systemd_install_enables_and_uninstall_disables(sandbox, homes, linux, monkeypatch):
    one, _ = homes
    executable(sandbox / "systemctl", FAKE_SYSTEMCTL)
    name = schedule.systemd_name(one.home)
    out = schedule_install.systemd_install(one, schedule.systemd_units(one))
    assert out.splitlines()[2:] == [f"enabled {name}.timer", f"note: {schedule_install.LINGER}"]
    assert _calls() == ["--user daemon-reload", f"--user enable --now {name}.timer"]
    out = schedule_install.systemd_uninstall(one)
    assert out.splitlines()[0] == f"disabled {name}.timer"
    assert _calls()[2:] == [f"--user disable --now {name}.timer", "--user daemon-reload"]
    assert not list(schedule.systemd_dir().iterdir())
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    out = schedule_install.systemd_install(one, schedule.systemd_units(one))
    assert "not enabled: exit 1" in out and "enable it with:" in out


def test_systemd_is_refused_off_linux(sandbox, homes, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    one, _ = homes
    for call in (
        lambda: schedule_install.systemd_install(one, schedule.systemd_units(one)),
        lambda: schedule_install.systemd_uninstall(one),
    ):
        with pytest.raises(UsageError) as err:
            call()
        assert err.value.kind == "unsupported_platform" and "cron --install" in err.value.hint
    assert not schedule.systemd_dir().exists()


# -- launchd ------------------------------------------------------------------------------------


def test_launchd_is_refused_off_macos(sandbox, homes, linux):
    one, _ = homes
    with pytest.raises(UsageError) as err:
        schedule_install.launchd_install(one, schedule.launchd_plist(one))
    assert err.value.kind == "unsupported_platform" and "macOS" in err.value.message
    assert not schedule.launchd_path(one.home).exists()
    code, _, stderr = cli("schedule", "launchd", "--install")
    assert code == 2 and stderr.startswith("holon: unsupported_platform: launchd entries are ")


def test_launchd_install_and_uninstall_on_macos(sandbox, homes, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    executable(sandbox / "launchctl", FAKE_SYSTEMCTL)
    one, _ = homes
    plist = schedule.launchd_plist(one)
    path = schedule.launchd_path(one.home)
    label = schedule.launchd_label(one.home)
    assert schedule_install.launchd_install(one, plist) == f"wrote {path}\nloaded {label}"
    assert path.read_text() == plist and str(path).startswith(os.environ["HOME"])
    assert (one.home / "logs").stat().st_mode & 0o777 == 0o700
    assert _calls() == [f"unload {path}", f"load -w {path}"]
    schedule_install.launchd_install(one, plist)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert schedule_install.launchd_uninstall(one) == f"removed {path}"
    assert _calls()[-1] == f"unload -w {path}" and not path.exists()
    assert "nothing to remove" in schedule_install.launchd_uninstall(one)


# -- the commands -------------------------------------------------------------------------------


def test_schedule_cron_install_and_uninstall_commands(sandbox, crontab, homes):
    code, out, err = cli("schedule", "cron", "--every", "5m", "--install")
    assert code == 0, err
    (line,) = _crontab().read_text().splitlines()
    assert out == f"installed in crontab: {line}\n" and line.startswith("*/5 * * * * HOLON_HOME=")
    assert line.endswith(f" tick --all --log # holon tick: HOLON_HOME={homes[0].home}")
    assert cli("schedule", "cron", "--every", "5m", "--install")[0] == 0
    assert _crontab().read_text() == f"{line}\n"
    code, out, _ = cli("schedule", "cron", "--uninstall")
    assert code == 0 and out == f"removed from crontab: {line}\n"
    assert cli("schedule", "cron", "--uninstall")[1].endswith("nothing to remove\n")
    (sandbox / "crontab").unlink()
    code, _, err = cli("schedule", "cron", "--install")
    assert code == 1 and "holon: no_crontab: crontab is not installed" in err


def test_schedule_systemd_install_and_uninstall_commands(sandbox, homes, linux):
    code, out, err = cli("schedule", "systemd", "--every", "3m", "--install")
    assert code == 1 and out.startswith("wrote ")  # written, but without systemctl not active
    assert err.startswith("holon: schedule_not_active: the timer is not active: systemctl is not")
    timer = schedule.systemd_dir() / f"{schedule.systemd_name(homes[0].home)}.timer"
    assert "OnUnitActiveSec=180s" in timer.read_text()
    code, out, _ = cli("schedule", "systemd", "--uninstall")
    assert code == 0 and not timer.exists()


def test_install_and_uninstall_together_is_a_usage_error(sandbox, crontab, homes):
    code, _, err = cli("schedule", "cron", "--install", "--uninstall")
    assert code == 2 and err.startswith("holon: conflicting_options: ")
    assert not _crontab().exists()


# -- installed_entries --------------------------------------------------------------------------


def test_installed_entries_finds_every_home(sandbox, crontab, homes, linux, tmp_path):
    one, two = homes
    schedule_install.cron_install(one, schedule.cron_line(one))
    schedule_install.cron_install(two, schedule.cron_line(two))
    with _crontab().open("a") as f:
        f.write("HOLON_HOME=/crontab/wide\n* * * * * /gone/holon tick --all >> /var/log/h.log\n")
    schedule_install.systemd_install(two, schedule.systemd_units(two))
    plist = schedule.launchd_path(one.home)
    plist.parent.mkdir(parents=True)
    plist.write_text(schedule.launchd_plist(one))
    exe = str(sandbox / "holon")
    expected = [
        ("cron", schedule.cron_line(one), str(one.home), True, exe, True, one.home),
        ("cron", schedule.cron_line(two), str(two.home), False, exe, True, two.home),
        (
            "cron",
            "* * * * * /gone/holon tick --all >> /var/log/h.log",
            "/crontab/wide",
            False,
            "/gone/holon",
            False,
            "/var/log/h.log",
        ),
        (
            "systemd",
            str(schedule.systemd_dir() / f"{schedule.systemd_name(two.home)}.service"),
            str(two.home),
            False,
            exe,
            True,
            two.home,
        ),
        ("launchd", str(plist), str(one.home), True, exe, True, one.home),
    ]
    found = schedule_found.installed_entries()
    keys = ["scheduler", "where", "holon_home", "matches", "command", "command_exists", "logs"]
    assert [list(e) for e in found] == [keys] * len(found)
    assert [tuple(e.values()) for e in found] == [
        (*row[:6], str(row[6] / "logs" / "tick.log") if isinstance(row[6], Path) else row[6])
        for row in expected
    ]


def test_installed_entries_of_older_holons(sandbox, crontab, homes):
    _crontab().write_text("* * * * * holon tick --all >/dev/null 2>&1\n")
    (entry,) = schedule_found.installed_entries()
    assert entry["holon_home"] is None and entry["matches"] is False  # ticks the default home
    assert entry["command"] == "holon" and entry["command_exists"] is False  # not on cron's PATH
    assert entry["logs"] is None


def test_installed_entries_never_raises(sandbox, crontab, homes, monkeypatch):
    _crontab().write_bytes(
        b"\x00garbage\n* * * * * 'unbalanced holon tick\n@reboot\n\xff * * *\n"
        b"* * * * * /x/holon tick --all %stdin\n"
    )
    systemd = schedule.systemd_dir()
    systemd.mkdir(parents=True)
    (systemd / "holon-tick.service").write_bytes(b"ExecStart=\xff'broken\nEnvironment=\"A\n")
    (systemd / "holon-tick-x.service").write_text("[Service]\n")
    launch = schedule.launchd_dir()
    launch.mkdir(parents=True)
    (launch / "dev.holon.tick.plist").write_text("<plist><dict><key>")
    (launch / "dev.holon.tick.a.plist").write_bytes(plistlib.dumps(["not", "a", "dict"]))
    (launch / "dev.holon.tick.b.plist").write_bytes(plistlib.dumps({"ProgramArguments": [1]}))
    found = schedule_found.installed_entries()
    assert [(e["scheduler"], e["command"]) for e in found] == [("cron", "/x/holon")]
    (sandbox / "crontab").unlink()
    assert schedule_found.installed_entries() == []
    executable(sandbox / "crontab", "#!/bin/sh\necho nope >&2\nexit 1\n")
    assert schedule_found.installed_entries() == []

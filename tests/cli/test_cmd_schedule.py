"""`holon schedule cron|launchd|systemd`: the printed forms only. --install is never run here: it
would touch the real crontab or the user's launchd/systemd directories."""

from __future__ import annotations

import os
import plistlib

import pytest
from cmd_checks import fails, ok

from holon.cli.schedule import schedule_cmd


@pytest.fixture
def exe(tmp_path, monkeypatch):
    """A `holon` first on PATH, so the entries name a known absolute path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    path = bin_dir / "holon"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return os.path.realpath(path)


@pytest.mark.parametrize(
    "every, spec",
    [
        (None, "* * * * *"),
        ("1m", "* * * * *"),
        ("30s", "* * * * *"),
        ("5m", "*/5 * * * *"),
        ("15m", "*/15 * * * *"),
    ],
)
def test_cron_line(exe, every, spec):
    args = ["cron"] + (["--every", every] if every else [])
    assert ok(schedule_cmd, *args).stdout == f"{spec} {exe} tick --all >/dev/null 2>&1\n"


def test_launchd_plist_parses(exe):
    out = ok(schedule_cmd, "launchd", "--every", "5m").stdout
    plist = plistlib.loads(out.encode())
    assert plist == {
        "Label": "dev.holon.tick",
        "ProgramArguments": [exe, "tick", "--all"],
        "StartInterval": 300,
        "RunAtLoad": True,
    }


def test_systemd_units(exe):
    out = ok(schedule_cmd, "systemd", "--every", "2m").stdout
    service, _, timer = out.partition("# holon-tick.timer\n")
    assert service.startswith("# holon-tick.service\n[Unit]\n")
    assert f"ExecStart={exe} tick --all\n" in service and "Type=oneshot" in service
    assert "OnUnitActiveSec=120s" in timer and "OnBootSec=120s" in timer
    assert "WantedBy=timers.target" in timer


def test_printing_writes_nothing(exe, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for sub in ("cron", "launchd", "systemd"):
        ok(schedule_cmd, sub)
    assert not (tmp_path / "home").exists() and not (tmp_path / "xdg").exists()


@pytest.mark.parametrize("sub", ["cron", "launchd", "systemd"])
def test_bad_interval_is_a_usage_error(exe, sub):
    _, err = fails("schedule", sub, "--every", "often", code=2, kind="invalid_duration")
    assert "'often'" in err

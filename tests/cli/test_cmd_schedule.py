"""`holon schedule cron|launchd|systemd`: the printed entries and the options' errors. --install
and --uninstall are tested in tests/ops/test_schedule_install.py against fakes; never here."""

from __future__ import annotations

import hashlib
import plistlib
import sys

import pytest
from cmd_checks import fails, ok
from helpers import REPO, run

from holon.cli.schedule import schedule_cmd


@pytest.fixture
def exe(tmp_path, monkeypatch):
    """This process looks like the `holon` console script at tmp_path/my bin/holon."""
    bin_dir = tmp_path / "my bin"
    bin_dir.mkdir()
    path = bin_dir / "holon"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(path), "schedule"])
    return str(path)


def _hash(home) -> str:
    return hashlib.sha256(str(home).encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    "every, spec",
    [
        (None, "* * * * *"),
        ("1m", "* * * * *"),
        ("5m", "*/5 * * * *"),
        ("15m", "*/15 * * * *"),
        ("1h", "0 * * * *"),
        ("2h", "0 */2 * * *"),
        ("1d", "0 0 * * *"),
    ],
)
def test_cron_line(exe, holon_env, every, spec):
    args = ["cron"] + (["--every", every] if every else [])
    bin_dir = exe.rsplit("/", 1)[0]
    assert ok(schedule_cmd, *args).stdout == (
        f"{spec} HOLON_HOME={holon_env} PATH='{bin_dir}:/usr/local/bin:/usr/bin:/bin' "
        f"'{exe}' tick --all --log # holon tick: HOLON_HOME={holon_env}\n"
    )


def test_launchd_plist_parses(exe, holon_env):
    out = ok(schedule_cmd, "launchd", "--every", "5m").stdout
    assert plistlib.loads(out.encode()) == {
        "Label": f"dev.holon.tick.{_hash(holon_env)}",
        "ProgramArguments": [exe, "tick", "--all", "--log"],
        "EnvironmentVariables": {
            "HOLON_HOME": str(holon_env),
            "PATH": f"{exe.rsplit('/', 1)[0]}:/usr/local/bin:/usr/bin:/bin",
        },
        "StartInterval": 300,
        "RunAtLoad": True,
        "StandardOutPath": f"{holon_env}/logs/launchd.stdout.log",
        "StandardErrorPath": f"{holon_env}/logs/launchd.stderr.log",
    }


def test_systemd_units(exe, holon_env):
    out = ok(schedule_cmd, "systemd", "--every", "90m").stdout
    name = f"holon-tick-{_hash(holon_env)}"
    service, _, timer = out.partition(f"# {name}.timer\n")
    assert service.startswith(f"# {name}.service\n[Unit]\n")
    assert f'\nEnvironment="HOLON_HOME={holon_env}"\n' in service
    assert f'\nExecStart="{exe}" tick --all --log\n' in service
    assert "OnUnitActiveSec=5400s" in timer and "OnBootSec=5400s" in timer
    assert "WantedBy=timers.target" in timer


def test_run_as_python_dash_m_the_entry_is_python_dash_m_with_pythonpath(holon_env):
    """The tests run `python -m holon` from the checkout; the venv's python alone would import
    an installed copy (or none), so the entry sets PYTHONPATH to the checkout."""
    proc = run("schedule", "cron")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(
        f" PYTHONPATH={REPO} {sys.executable} -m holon tick --all --log"
        f" # holon tick: HOLON_HOME={holon_env}\n"
    )


def test_printing_writes_nothing(exe, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for sub in ("cron", "launchd", "systemd"):
        ok(schedule_cmd, sub)
    assert not (tmp_path / "home").exists() and not (tmp_path / "xdg").exists()


@pytest.mark.parametrize("sub", ["cron", "launchd", "systemd"])
def test_bad_interval_is_a_usage_error(exe, sub):
    _, err = fails("schedule", sub, "--every", "often", code=2, kind="invalid_interval")
    assert "'often'" in err


@pytest.mark.parametrize("every", ["7m", "90m", "5h", "2d", "30s"])
def test_cron_refuses_what_it_cannot_express(exe, every):
    _, err = fails("schedule", "cron", "--every", every, code=2, kind="invalid_interval")
    assert "hint: cron can run every 1m 2m 3m" in err


@pytest.mark.parametrize("sub", ["launchd", "systemd"])
def test_timers_refuse_under_a_minute(exe, sub):
    fails("schedule", sub, "--every", "30s", code=2, kind="invalid_interval")


def test_install_with_uninstall_is_refused(exe):
    fails("schedule", "systemd", "--install", "--uninstall", code=2, kind="conflicting_options")


def test_help_explains_the_entries():
    out = ok(schedule_cmd, "--help").stdout
    assert "HOLON_HOME" in out and "tick.log" in out
    cron = ok(schedule_cmd, "cron", "--help").stdout
    assert "--install" in cron and "--uninstall" in cron and "12h" in cron


def test_systemd_install_exits_1_when_the_timer_is_not_active(tmp_path):
    import sys

    from helpers import run, subprocess_env

    if not sys.platform.startswith("linux"):
        pytest.skip("systemd units are Linux only")
    bin_dir = tmp_path / "bin"  # a systemctl that answers but activates nothing (no user bus)
    bin_dir.mkdir()
    fake = bin_dir / "systemctl"
    fake.write_text('#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n')
    fake.chmod(0o755)
    env = subprocess_env(HOME=str(tmp_path), PATH=f"{bin_dir}:/usr/bin:/bin")
    r = run("schedule", "systemd", "--install", env=env)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "wrote " in r.stdout and "not enabled: Failed to connect to bus" in r.stdout
    first, hint = r.stderr.splitlines()
    assert first == (
        "holon: schedule_not_active: the timer is not active: Failed to connect to bus: "
        "No medium found"
    )
    assert hint.startswith("hint: enable it as the lines above say")

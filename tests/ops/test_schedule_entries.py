"""holon.ops.schedule: the entries' text (cron, systemd, launchd), intervals, quoting, names, and
how this holon is run (console script, or `<python> -m holon` with PYTHONPATH when needed)."""

from __future__ import annotations

import hashlib
import os
import plistlib
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes import executable

from holon.errors import InvalidInput, UsageError
from holon.ops import schedule, schedule_found
from holon.ops.schedule import Runner

EXE = "/opt/holon/bin/holon"
HOME = Path("/srv/holon")
PATH = "/opt/holon/bin:/usr/local/bin:/usr/bin:/bin"
R = Runner((EXE,), (("HOLON_HOME", str(HOME)), ("PATH", PATH)), HOME)
TAG = f"# holon tick: HOLON_HOME={HOME}"


@pytest.mark.parametrize(
    "every, spec",
    [
        ("1m", "* * * * *"),
        ("60s", "* * * * *"),
        ("2m", "*/2 * * * *"),
        ("5m", "*/5 * * * *"),
        ("15m", "*/15 * * * *"),
        ("30m", "*/30 * * * *"),
        ("60m", "0 * * * *"),
        ("1h", "0 * * * *"),
        ("2h", "0 */2 * * *"),
        ("120m", "0 */2 * * *"),
        ("6h", "0 */6 * * *"),
        ("12h", "0 */12 * * *"),
        ("24h", "0 0 * * *"),
        ("1d", "0 0 * * *"),
    ],
)
def test_cron_intervals(every, spec):
    assert schedule.cron_spec(every) == spec
    assert schedule.cron_line(R, every).startswith(f"{spec} HOLON_HOME=")


@pytest.mark.parametrize("every", ["7m", "90m", "45m", "5h", "7h", "2d", "1w", "30s", "90s", "25h"])
def test_intervals_cron_cannot_express_are_refused(every):
    with pytest.raises(InvalidInput) as err:
        schedule.cron_spec(every)
    assert err.value.kind == "invalid_interval" and err.value.exit_code == 2
    assert f"cron cannot run every {every}" == err.value.message
    assert "1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m, 1h 2h 3h 4h 6h 8h 12h, 1d" in err.value.hint
    assert "holon schedule systemd" in err.value.hint


@pytest.mark.parametrize("every", ["often", "0m", "-5m", ""])
def test_malformed_intervals_are_refused(every):
    for check in (schedule.cron_spec, schedule.interval_seconds):
        with pytest.raises(InvalidInput) as err:
            check(every)
        assert err.value.kind == "invalid_interval" and repr(every) in err.value.message


@pytest.mark.parametrize("every, seconds", [("1m", 60), ("7m", 420), ("90m", 5400), ("2d", 172800)])
def test_systemd_and_launchd_take_any_interval_of_a_minute_or_more(every, seconds):
    assert schedule.interval_seconds(every) == seconds
    timer = schedule.systemd_units(R, every)["holon-tick-" + _hash(HOME) + ".timer"]
    assert f"OnUnitActiveSec={seconds}s" in timer
    assert plistlib.loads(schedule.launchd_plist(R, every).encode())["StartInterval"] == seconds


@pytest.mark.parametrize("every", ["30s", "59s", "500ms"])
def test_systemd_and_launchd_refuse_under_a_minute(every):
    with pytest.raises(InvalidInput) as err:
        schedule.interval_seconds(every)
    assert err.value.kind == "invalid_interval" and "a minute or more" in err.value.hint


def test_cron_every_two_hours_runs_every_two_hours():
    from croniter import croniter

    spec = schedule.cron_line(R, "2h").split(" HOLON_HOME=")[0]
    times = croniter(spec, datetime(2027, 1, 1, tzinfo=UTC))
    first, second = times.get_next(float), times.get_next(float)
    assert second - first == 7200


def test_cron_line():
    assert schedule.cron_line(R, "5m") == (
        f"*/5 * * * * HOLON_HOME={HOME} PATH={PATH} {EXE} tick --all --log {TAG}"
    )


def test_cron_line_quotes_paths_with_spaces_quotes_and_percent():
    home = Path("/srv/my 'holon' home%1")
    exe = '/opt/my "tools"/bin/holon'
    r = Runner((exe,), (("HOLON_HOME", str(home)), ("PATH", "/opt/x:/bin")), home)
    line = schedule.cron_line(r)
    command = line.removeprefix("* * * * * ").replace("\\%", "%")  # what cron gives /bin/sh
    assert "%" not in line.replace("\\%", "")  # a bare % would start cron's stdin
    words = shlex.split(command)
    assert words[:6] == [f"HOLON_HOME={home}", "PATH=/opt/x:/bin", exe, "tick", "--all", "--log"]
    assert words[6:] == ["#", "holon", "tick:", f"HOLON_HOME={home}"]
    assert shlex.split(command, comments=True) == words[:6]


def test_systemd_units():
    name = f"holon-tick-{_hash(HOME)}"
    units = schedule.systemd_units(R, "2m")
    assert list(units) == [f"{name}.service", f"{name}.timer"]
    assert units[f"{name}.service"] == (
        "[Unit]\n"
        f"Description=holon: run due agent work (tick --all) for HOLON_HOME={HOME}\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f'Environment="HOLON_HOME={HOME}"\n'
        f'Environment="PATH={PATH}"\n'
        f"ExecStart={EXE} tick --all --log\n"
    )
    assert units[f"{name}.timer"] == (
        "[Unit]\n"
        f"Description=Run holon tick --all every 2m for HOLON_HOME={HOME}\n"
        "\n"
        "[Timer]\n"
        "OnBootSec=120s\n"
        "OnUnitActiveSec=120s\n"
        "AccuracySec=1s\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )


def test_systemd_quoting():
    home = Path('/srv/a "b" \\c %d $e')
    exe = "/opt/my tools/holon"
    r = Runner((exe,), (("HOLON_HOME", str(home)),), home)
    service = next(iter(schedule.systemd_units(r).values()))
    assert 'Environment="HOLON_HOME=/srv/a \\"b\\" \\\\c %%d $e"\n' in service
    assert 'ExecStart="/opt/my tools/holon" tick --all --log\n' in service
    r = Runner(("/py", "-m", "holon"), (("HOLON_HOME", str(home)),), home)
    assert "ExecStart=/py -m holon tick --all --log\n" in next(
        iter(schedule.systemd_units(r).values())
    )
    r = Runner(("/opt/$x%y/holon",), (), home)
    assert "ExecStart=/opt/$$x%%y/holon tick" in next(iter(schedule.systemd_units(r).values()))


def test_launchd_plist():
    text = schedule.launchd_plist(R, "5m")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')
    assert plistlib.loads(text.encode()) == {
        "Label": f"dev.holon.tick.{_hash(HOME)}",
        "ProgramArguments": [EXE, "tick", "--all", "--log"],
        "EnvironmentVariables": {"HOLON_HOME": str(HOME), "PATH": PATH},
        "StartInterval": 300,
        "RunAtLoad": True,
        "StandardOutPath": f"{HOME}/logs/launchd.stdout.log",
        "StandardErrorPath": f"{HOME}/logs/launchd.stderr.log",
    }


def test_launchd_plist_escapes_xml():
    home = Path("/srv/<a> & 'b' \"c\"")
    r = Runner((EXE,), (("HOLON_HOME", str(home)),), home)
    text = schedule.launchd_plist(r)
    assert "<string>/srv/&lt;a&gt; &amp; 'b' \"c\"</string>" in text
    assert plistlib.loads(text.encode())["EnvironmentVariables"]["HOLON_HOME"] == str(home)


def _hash(home: Path) -> str:
    return hashlib.sha256(str(home).encode()).hexdigest()[:8]


def test_names_carry_a_hash_unless_the_home_is_the_default(tmp_path, monkeypatch):
    import platformdirs

    default = Path(platformdirs.user_data_dir("holon", appauthor=False))
    assert schedule.systemd_name(default) == "holon-tick"
    assert schedule.launchd_label(default) == "dev.holon.tick"
    other = tmp_path / "h"
    assert schedule.systemd_name(other) == f"holon-tick-{_hash(other)}"
    assert schedule.launchd_label(other) == f"dev.holon.tick.{_hash(other)}"
    assert schedule.systemd_name(tmp_path / "g") != schedule.systemd_name(other)


def test_install_locations_follow_home_and_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    home = Path(os.environ["HOLON_HOME"])
    label = schedule.launchd_label(home)
    assert schedule.launchd_path(home) == tmp_path / f"Library/LaunchAgents/{label}.plist"
    assert schedule.systemd_dir() == tmp_path / ".config/systemd/user"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert schedule.systemd_dir() == tmp_path / "xdg/systemd/user"


# -- how this holon is run ----------------------------------------------------------------------


def test_the_console_script_runs_when_it_is_what_runs(tmp_path, monkeypatch, holon_env):
    (tmp_path / "bin").mkdir()
    script = executable(tmp_path / "bin" / "holon", "#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script), "schedule", "cron"])
    r = schedule.runner()
    assert r.argv == (str(script),) and r.home == holon_env
    assert dict(r.env) == {
        "HOLON_HOME": str(holon_env),
        "PATH": f"{tmp_path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
    }


def test_otherwise_python_dash_m_holon(monkeypatch, holon_env):
    monkeypatch.setattr(sys, "argv", ["/somewhere/holon/__main__.py", "schedule", "cron"])
    r = schedule.runner()
    assert r.argv == (sys.executable, "-m", "holon")
    assert r.command == [sys.executable, "-m", "holon", "tick", "--all", "--log"]
    assert dict(r.env)["PATH"].startswith(f"{os.path.dirname(sys.executable)}:")


def test_pythonpath_only_when_that_python_does_not_import_this_holon(tmp_path):
    import holon

    repo = str(Path(holon.__file__).resolve().parent.parent)
    lost = executable(tmp_path / "lost-python", "#!/bin/sh\nexit 1\n")
    other = executable(tmp_path / "other-python", "#!/bin/sh\necho /elsewhere/holon/__init__.py\n")
    same = executable(tmp_path / "same-python", f"#!/bin/sh\necho '{holon.__file__}'\n")
    assert schedule._pythonpath(str(lost)) == repo
    assert schedule._pythonpath(str(other)) == repo  # a different (say stale) copy is not this one
    assert schedule._pythonpath(str(same)) is None
    assert schedule._pythonpath(str(tmp_path / "no-such-python")) == repo


def test_a_home_with_a_line_break_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("HOLON_HOME", str(tmp_path / "a\nb"))
    with pytest.raises(UsageError) as err:
        schedule.runner()
    assert err.value.kind == "unsupported_path"


# -- reading crontab lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, command, env, tag",
    [
        (schedule.cron_line(R), EXE, {"HOLON_HOME": str(HOME), "PATH": PATH}, str(HOME)),
        ("* * * * * /old/holon tick --all >/dev/null 2>&1", "/old/holon", {}, None),
        ("@reboot holon tick --all", "holon", {}, None),
        ("*/5 * * * * cd /x && A=1 /py -m holon tick a", "/py", {"A": "1"}, None),
        (
            "* * * * * HOLON_HOME=/a\\%b /x/holon tick --all",
            "/x/holon",
            {"HOLON_HOME": "/a%b"},
            None,
        ),
    ],
)
def test_parse_cron_line(line, command, env, tag):
    tick = schedule_found.parse_cron_line(line)
    assert (tick["command"], tick["env"], tick["tag"]) == (command, env, tag)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "# * * * * * /x/holon tick --all",
        "HOLON_HOME=/x",
        "MAILTO = me",
        "0 3 * * * /usr/bin/backup",
        "* * * * * /x/holon status a",
        "* * * * * /x/holon tick 'unbalanced",
        "* * * * *",
        "* * * * * echo %holon tick",
    ],
)
def test_other_crontab_lines_are_not_holon_ticks(line):
    assert schedule_found.parse_cron_line(line) is None

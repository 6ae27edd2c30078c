"""Scheduler entries that run `holon tick --all --log`: a crontab line, systemd units, a plist.

A scheduler starts the tick in a bare environment (cron: HOME, LOGNAME, PATH=/usr/bin:/bin), so
every entry carries what the tick needs: the absolute command that runs this holon (the `holon`
console script when that is what runs, else `<python> -m holon`, plus PYTHONPATH when that python
would not import this same copy of holon without it), HOLON_HOME (absolute) and PATH (the
command's directory, then /usr/local/bin:/usr/bin:/bin).

Names, one entry per HOLON_HOME: a crontab line ends with the tag `# holon tick: HOLON_HOME=<path>`;
the systemd units are `holon-tick.service` and `.timer` and the launchd label `dev.holon.tick` for
the default HOLON_HOME, and any other HOLON_HOME adds `-<hash>` (systemd) or `.<hash>` (launchd):
the first 8 hex digits of the SHA-256 of its absolute path.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from holon import paths
from holon.agent.timers import parse_duration
from holon.errors import InvalidInput, UsageError

LAUNCHD_LABEL = "dev.holon.tick"
SYSTEMD_NAME = "holon-tick"
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
TICK_ARGS = ("tick", "--all", "--log")
CRON_TAG = "# holon tick: HOLON_HOME="
CRON_FORMS = "1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m, 1h 2h 3h 4h 6h 8h 12h, 1d"


@dataclass(frozen=True)
class Runner:
    """How a scheduler runs this holon for one HOLON_HOME: command words and their environment."""

    argv: tuple[str, ...]  # ("/venv/bin/holon",) or ("/usr/bin/python3", "-m", "holon")
    env: tuple[tuple[str, str], ...]  # HOLON_HOME, PATH and, when needed, PYTHONPATH
    home: Path

    @property
    def command(self) -> list[str]:
        return [*self.argv, *TICK_ARGS]


def _argv() -> list[str]:
    """This `holon` console script when it is what runs, else `<this python> -m holon`."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if (
        os.path.basename(script) == "holon"
        and os.path.isfile(script)
        and os.access(script, os.X_OK)
    ):
        return [script]  # the console script; a symlink is kept, so an upgrade that moves it works
    return [os.path.abspath(sys.executable or "/usr/bin/python3"), "-m", "holon"]


def runner() -> Runner:
    """The Runner for the HOLON_HOME in effect."""
    home = paths.holon_home()
    argv = _argv()  # the console script may be absent or stale: only what runs now is trusted
    env = [("HOLON_HOME", str(home)), ("PATH", _search_path(argv[0]))]
    if argv[1:] == ["-m", "holon"]:
        extra = _pythonpath(argv[0])
        env += [("PYTHONPATH", extra)] if extra else []
    for _, value in env:
        if any(c in value for c in "\n\r\0"):
            raise UsageError(
                f"{value!r} holds a line break, which no scheduler entry can carry",
                kind="unsupported_path",
                hint="use a HOLON_HOME and an install location without line breaks",
            )
    return Runner(tuple(argv), tuple(env), home)


def _search_path(exe: str) -> str:
    return ":".join(dict.fromkeys([os.path.dirname(exe), *BASE_PATH.split(":")]))


def _pythonpath(python: str) -> str | None:
    """The directory holding this holon package, unless `python -m holon` imports this same copy
    without help (checked as a scheduler runs it: a bare environment, from /)."""
    import holon

    mine = os.path.realpath(holon.__file__)
    env = {"HOME": os.environ.get("HOME", "/"), "PATH": "/usr/bin:/bin"}
    probe = [python, "-c", "import holon; print(holon.__file__)"]
    try:
        found = subprocess.run(probe, env=env, cwd="/", capture_output=True, text=True, timeout=60)
        if found.returncode == 0 and os.path.realpath(found.stdout.strip()) == mine:
            return None
    except (OSError, subprocess.SubprocessError):
        pass
    return os.path.dirname(os.path.dirname(mine))


# -- intervals ----------------------------------------------------------------------------------


def _seconds(every: str, hint: str) -> int:
    try:
        return round(parse_duration(every))
    except InvalidInput:
        raise InvalidInput(
            f"invalid interval {every!r}", kind="invalid_interval", hint=hint
        ) from None


def cron_spec(every: str) -> str:
    """The five cron fields for `every`: minutes that divide 60, hours that divide 24, or 1d."""
    hint = f"cron can run every {CRON_FORMS}; for any other interval use `holon schedule systemd`"
    hint += " or `holon schedule launchd`"
    minutes, rest = divmod(_seconds(every, hint), 60)
    if not rest and 0 < minutes < 60 and 60 % minutes == 0:
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    hours, rest_minutes = divmod(minutes, 60)
    if not rest and not rest_minutes and hours and 24 % hours == 0:
        return {1: "0 * * * *", 24: "0 0 * * *"}.get(hours, f"0 */{hours} * * *")
    raise InvalidInput(f"cron cannot run every {every}", kind="invalid_interval", hint=hint)


def interval_seconds(every: str) -> int:
    """systemd and launchd take any interval of a minute or more."""
    hint = "use a minute or more: 1m, 90m, 5h, 2d"
    seconds = _seconds(every, hint)
    if seconds < 60:
        raise InvalidInput(
            f"interval {every} is under a minute", kind="invalid_interval", hint=hint
        )
    return seconds


# -- the entries --------------------------------------------------------------------------------


def cron_line(r: Runner, every: str = "1m") -> str:
    """One crontab line: inline VAR=value assignments (run by cron's /bin/sh), the command, the
    tag. `%` is escaped, since cron turns a bare one into a line break."""
    words = [f"{k}={shlex.quote(v)}" for k, v in r.env] + [shlex.quote(w) for w in r.command]
    line = f"{cron_spec(every)} {' '.join(words)} {CRON_TAG}{shlex.quote(str(r.home))}"
    return line.replace("%", "\\%")


def systemd_units(r: Runner, every: str = "1m") -> dict[str, str]:
    seconds = interval_seconds(every)
    name = systemd_name(r.home)
    home = str(r.home).replace("%", "%%")
    env = "".join(f"Environment={_sd_word(f'{k}={v}', force=True)}\n" for k, v in r.env)
    service = f"""[Unit]
Description=holon: run due agent work (tick --all) for HOLON_HOME={home}

[Service]
Type=oneshot
{env}ExecStart={" ".join(_sd_word(w.replace("$", "$$")) for w in r.command)}
"""
    timer = f"""[Unit]
Description=Run holon tick --all every {every} for HOLON_HOME={home}

[Timer]
OnBootSec={seconds}s
OnUnitActiveSec={seconds}s
AccuracySec=1s

[Install]
WantedBy=timers.target
"""
    return {f"{name}.service": service, f"{name}.timer": timer}


def _sd_word(word: str, force: bool = False) -> str:
    """One word of a systemd line: `%` doubled (specifiers); quoted, with C escapes, if needed."""
    text = word.replace("%", "%%")
    if text and not force and not any(c in text for c in " \t\"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def launchd_plist(r: Runner, every: str = "1m") -> str:
    logs = r.home / "logs"
    doc = {
        "Label": launchd_label(r.home),
        "ProgramArguments": r.command,
        "EnvironmentVariables": dict(r.env),
        "StartInterval": interval_seconds(every),
        "RunAtLoad": True,
        "StandardOutPath": str(logs / "launchd.stdout.log"),
        "StandardErrorPath": str(logs / "launchd.stderr.log"),
    }
    return plistlib.dumps(doc, sort_keys=False).decode()


# -- names and places ---------------------------------------------------------------------------


def _suffix(home: Path, sep: str) -> str:
    import platformdirs

    default = platformdirs.user_data_dir("holon", appauthor=False)
    if os.path.realpath(home) == os.path.realpath(default):
        return ""
    return sep + hashlib.sha256(os.fsencode(str(home))).hexdigest()[:8]


def systemd_name(home: Path) -> str:
    return SYSTEMD_NAME + _suffix(home, "-")


def launchd_label(home: Path) -> str:
    return LAUNCHD_LABEL + _suffix(home, ".")


def launchd_dir() -> Path:
    return Path.home() / "Library" / "LaunchAgents"


def launchd_path(home: Path) -> Path:
    return launchd_dir() / f"{launchd_label(home)}.plist"


def systemd_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"

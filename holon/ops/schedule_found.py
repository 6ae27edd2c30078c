"""What scheduler entries are installed: crontab lines that run `holon ... tick`, the systemd
user units and launchd plists holon writes, with the HOLON_HOME each one ticks. Read by
`holon schedule --install/--uninstall` and `holon doctor`; `installed_entries` never raises."""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from holon import paths
from holon.errors import HolonError, OperationFailed
from holon.ops import schedule

_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_CRON_ENV = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_crontab() -> list[str]:
    """The lines of this user's crontab ([] when there is none)."""
    if not shutil.which("crontab"):
        raise OperationFailed(
            "crontab is not installed",
            kind="no_crontab",
            hint="use `holon schedule systemd --install` or `holon schedule launchd --install`",
        )
    try:
        done = subprocess.run(
            ["crontab", "-l"],
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        done = subprocess.CompletedProcess([], 1, "", str(exc))
    if done.returncode == 0:
        return done.stdout.splitlines()
    if any(s in done.stderr.lower() for s in ("no crontab", "no such file")):
        return []
    raise OperationFailed(
        f"`crontab -l` failed: {done.stderr.strip()}",
        kind="crontab_failed",
        hint="check `crontab -l`; nothing was changed",
    )


def parse_cron_line(line: str) -> dict[str, Any] | None:
    """What a crontab line runs, if it runs `holon … tick` or `<python> -m holon … tick`: the
    `command` word, its inline `env`, its `args`, and the HOLON_HOME of its tag (or None)."""
    text = line.strip()
    if not text or text.startswith("#") or _CRON_ENV.match(text):
        return None
    fields = text.split(None, 1 if text.startswith("@") else 5)
    if len(fields) != (2 if text.startswith("@") else 6):
        return None
    command = _cron_command(fields[-1])
    try:
        words, all_words = shlex.split(command, comments=True), shlex.split(command)
    except ValueError:  # unbalanced quotes: not a line holon wrote
        return None
    at = next((i for i in range(len(words)) if _runs_holon_tick(words, i)), None)
    if at is None:
        return None
    env: dict[str, str] = {}
    for word in reversed(words[:at]):
        if not _ASSIGN.match(word):
            break
        env.setdefault(*word.split("=", 1))
    tag = None
    if all_words[-4:-1] == ["#", "holon", "tick:"] and all_words[-1].startswith("HOLON_HOME="):
        tag = all_words[-1].split("=", 1)[1]
    return {"command": words[at], "env": env, "args": words[at + 1 :], "tag": tag}


def _runs_holon_tick(words: list[str], i: int) -> bool:
    if _ASSIGN.match(words[i]):
        return False
    if os.path.basename(words[i]) == "holon" or words[i].endswith("/holon/__main__.py"):
        return "tick" in words[i + 1 :]  # __main__.py: what older holons wrote for `-m holon`
    return words[i + 1 : i + 3] == ["-m", "holon"] and "tick" in words[i + 3 :]


def _cron_command(text: str) -> str:
    """The command as cron hands it to the shell: `\\%` is `%`; a bare `%` starts its stdin."""
    out = []
    i = 0
    while i < len(text) and text[i] != "%":
        escaped = text[i] == "\\" and text[i + 1 : i + 2] == "%"
        out.append("%" if escaped else text[i])
        i += 2 if escaped else 1
    return "".join(out)


def installed_entries() -> list[dict[str, Any]]:
    """Installed entries that run `holon … tick`, for any HOLON_HOME (for `holon doctor`).

    Each is {"scheduler": "cron"|"systemd"|"launchd", "where": the crontab line or the file,
    "holon_home": the HOLON_HOME it sets (None: the default home), "matches": whether it ticks the
    HOLON_HOME in effect, "command": the executable it runs, "command_exists", "logs": the log it
    writes (None if unknown)}. Never raises: what cannot be read or parsed is left out.
    """
    found: list[dict[str, Any]] = []
    for source in (_cron_entries, _systemd_entries, _launchd_entries):
        try:
            found += source()
        except Exception:  # a report over files others may have edited must not fail on them
            continue
    return found


def _cron_entries() -> list[dict[str, Any]]:
    try:
        lines = read_crontab()
    except HolonError:
        return []
    env: dict[str, str] = {}
    out = []
    for line in lines:
        tick = parse_cron_line(line)
        if tick:
            words = tick["args"]
            out.append(_entry("cron", line, {**env, **tick["env"]}, [tick["command"], *words]))
        elif (m := _CRON_ENV.match(line)) and not line.lstrip().startswith("#"):
            env[m[1]] = _unquote(m[2])  # a crontab-wide assignment applies to the lines below it
    return out


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _systemd_entries() -> list[dict[str, Any]]:
    out = []
    for path in sorted(schedule.systemd_dir().glob(f"{schedule.SYSTEMD_NAME}*.service")):
        env: dict[str, str] = {}
        words: list[str] = []
        for line in path.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "Environment":
                env.update(w.split("=", 1) for w in _sd_split(value) if "=" in w)
            elif key.strip() == "ExecStart":
                words = [w.replace("$$", "$") for w in _sd_split(value.lstrip("-@:+!"))]
        if words:
            out.append(_entry("systemd", str(path), env, words))
    return out


def _sd_split(value: str) -> list[str]:
    try:
        return [w.replace("%%", "%") for w in shlex.split(value)]
    except ValueError:
        return []


def _launchd_entries() -> list[dict[str, Any]]:
    out = []
    for path in sorted(schedule.launchd_dir().glob(f"{schedule.LAUNCHD_LABEL}*.plist")):
        try:
            doc = plistlib.loads(path.read_bytes())
        except Exception:  # not a plist (plistlib raises ValueError or an expat error)
            continue
        args = doc.get("ProgramArguments") if isinstance(doc, dict) else None
        env = doc.get("EnvironmentVariables") if isinstance(doc, dict) else None
        if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
            env = env if isinstance(env, dict) else {}
            out.append(_entry("launchd", str(path), env, args, doc.get("StandardErrorPath")))
    return out


def _entry(
    scheduler: str, where: str, env: dict, words: list[str], log: Any = None
) -> dict[str, Any]:
    home = env.get("HOLON_HOME") if isinstance(env.get("HOLON_HOME"), str) else None
    ticks = Path(os.path.expanduser(home)) if home else _default_home()
    command = words[0]
    if os.path.isabs(os.path.expanduser(command)):
        exe = os.path.expanduser(command)
        exists = os.path.isfile(exe) and os.access(exe, os.X_OK)
    else:
        exists = shutil.which(command, path=env.get("PATH") or "/usr/bin:/bin") is not None
    if "--log" in words:
        log = str(ticks / "logs" / "tick.log")
    elif scheduler == "cron":
        log = _redirect(words)
    return {
        "scheduler": scheduler,
        "where": where,
        "holon_home": home,
        "matches": os.path.realpath(ticks) == os.path.realpath(paths.holon_home()),
        "command": command,
        "command_exists": exists,
        "logs": log if isinstance(log, str) else None,
    }


def _default_home() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("holon", appauthor=False))


def _redirect(words: list[str]) -> str | None:
    """Where a crontab command sends its output, unless nowhere (/dev/null)."""
    for i, word in enumerate(words):
        m = re.fullmatch(r"[12&]?>>?(.*)", word)
        if m:
            target = m[1] or (words[i + 1] if i + 1 < len(words) else "")
            if target and target != "/dev/null" and not target.startswith("&"):
                return target
    return None

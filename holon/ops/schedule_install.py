"""Installing scheduler entries (only on explicit --install); each returns what it did."""

from __future__ import annotations

import shutil
import subprocess

from holon.errors import OperationFailed
from holon.ops import schedule
from holon.store.atomic import write_text


def cron(line: str) -> str:
    if not shutil.which("crontab"):
        raise OperationFailed(
            "crontab is not installed",
            kind="no_crontab",
            hint="use `holon schedule systemd --install` or `holon schedule launchd --install`",
        )
    current = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    lines = [
        ln
        for ln in (current.stdout if current.returncode == 0 else "").splitlines()
        if " tick --all" not in ln
    ]
    lines.append(line)
    done = subprocess.run(
        ["crontab", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    if done.returncode != 0:
        raise OperationFailed(
            f"crontab refused the entry: {done.stderr.strip()}",
            kind="crontab_failed",
            hint="check `crontab -l` and install the line by hand",
        )
    return f"installed in crontab: {line}"


def launchd(plist: str) -> str:
    path = schedule.launchd_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, plist)
    return f"wrote {path}\nload it with: launchctl load -w {path}"


def systemd(units: dict[str, str]) -> str:
    base = schedule.systemd_dir()
    base.mkdir(parents=True, exist_ok=True)
    for name, text in units.items():
        write_text(base / name, text)
    msg = f"wrote {', '.join(str(base / n) for n in units)}"
    if shutil.which("systemctl"):
        run = subprocess.run(
            ["systemctl", "--user", "enable", "--now", f"{schedule.SYSTEMD_NAME}.timer"],
            capture_output=True,
            text=True,
        )
        if run.returncode == 0:
            return msg + f"\nenabled {schedule.SYSTEMD_NAME}.timer"
    return (
        msg + f"\nenable it with: systemctl --user daemon-reload && systemctl --user enable --now "
        f"{schedule.SYSTEMD_NAME}.timer"
    )

"""Installing and removing scheduler entries (only on explicit --install or --uninstall).

Each function touches only the entry of the HOLON_HOME in effect, returns what it did as lines
for the operator, and is idempotent: installing twice leaves one entry, removing twice is a no-op.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from holon.errors import OperationFailed, UsageError
from holon.ops import schedule, schedule_found
from holon.ops.schedule import Runner
from holon.store.atomic import write_text

LINGER = "it runs while you are logged in; to run it at all times: loginctl enable-linger $USER"


def cron_install(r: Runner, line: str) -> str:
    lines = schedule_found.read_crontab()
    wanted = [ln for ln in lines if not _ours(ln, r)] + [line]
    if wanted != lines:
        _write_crontab(wanted)
    return f"installed in crontab: {line}"


def cron_uninstall(r: Runner) -> str:
    lines = schedule_found.read_crontab()
    removed = [ln for ln in lines if _ours(ln, r)]
    if not removed:
        return f"no crontab entry for HOLON_HOME={r.home}: nothing to remove"
    _write_crontab([ln for ln in lines if not _ours(ln, r)])
    return "\n".join(f"removed from crontab: {ln}" for ln in removed)


def _ours(line: str, r: Runner) -> bool:
    """The line of this HOLON_HOME: tagged with it, or an untagged `tick --all` line of an older
    holon that runs this holon and sets no HOLON_HOME."""
    tick = schedule_found.parse_cron_line(line)
    if tick is None:
        return False
    if tick["tag"] is not None:
        return _same(tick["tag"], r.home)
    if "--all" not in tick["args"] or "HOLON_HOME=" in line:
        return False
    import holon

    main = Path(holon.__file__).with_name("__main__.py")  # what older holons wrote for `-m holon`
    return any(_same(tick["command"], exe) for exe in (r.argv[0], main))


def _same(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(os.path.expanduser(a)) == os.path.realpath(b)


def _write_crontab(lines: list[str]) -> None:
    text = "".join(f"{ln}\n" for ln in lines)
    try:
        done = subprocess.run(
            ["crontab", "-"],
            input=text,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=60,
        )
        why = done.stderr.strip() if done.returncode else None
    except (OSError, subprocess.SubprocessError) as exc:
        why = str(exc)
    if why is not None:
        raise OperationFailed(
            f"crontab refused the change: {why}",
            kind="crontab_failed",
            hint="check `crontab -l`, then add or remove the line by hand",
        )


def systemd_install(r: Runner, units: dict[str, str]) -> str:
    _need("linux", "systemd", "cron")
    base = schedule.systemd_dir()
    base.mkdir(parents=True, exist_ok=True)
    for name, text in units.items():
        write_text(base / name, text)
    timer = f"{schedule.systemd_name(r.home)}.timer"
    lines = [f"wrote {base / name}" for name in units]
    why = _run("systemctl", "--user", "daemon-reload") or _run(
        "systemctl", "--user", "enable", "--now", timer
    )
    if why is None:
        lines.append(f"enabled {timer}")
    else:
        how = f"systemctl --user daemon-reload && systemctl --user enable --now {timer}"
        lines += [f"not enabled: {why}", f"enable it with: {how}"]
    return "\n".join([*lines, f"note: {LINGER}"])


def systemd_inactive(r: Runner) -> str | None:
    """Why this HOLON_HOME's timer is not active after an install (None when it is)."""
    return _run(
        "systemctl", "--user", "is-active", "--quiet", f"{schedule.systemd_name(r.home)}.timer"
    )


def systemd_uninstall(r: Runner) -> str:
    _need("linux", "systemd", "cron")
    name = schedule.systemd_name(r.home)
    files = [schedule.systemd_dir() / f"{name}.{suffix}" for suffix in ("timer", "service")]
    if not any(f.exists() for f in files):
        return f"no systemd units for HOLON_HOME={r.home}: nothing to remove"
    out = []
    if shutil.which("systemctl"):
        why = _run("systemctl", "--user", "disable", "--now", f"{name}.timer")
        out.append(f"disabled {name}.timer" if why is None else f"not disabled: {why}")
    for f in files:
        if f.exists():
            f.unlink()
            out.append(f"removed {f}")
    if shutil.which("systemctl"):
        _run("systemctl", "--user", "daemon-reload")
    return "\n".join(out)


def launchd_install(r: Runner, plist: str) -> str:
    _need("darwin", "launchd", "cron")
    path = schedule.launchd_path(r.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    (r.home / "logs").mkdir(mode=0o700, parents=True, exist_ok=True)  # launchd opens its logs there
    write_text(path, plist)
    how = f"load it with: launchctl load -w {shlex.quote(str(path))}"
    if not shutil.which("launchctl"):
        return f"wrote {path}\n{how}"
    _run("launchctl", "unload", str(path))  # the copy loaded before, if any
    why = _run("launchctl", "load", "-w", str(path))
    loaded = f"loaded {schedule.launchd_label(r.home)}"
    return f"wrote {path}\n" + (loaded if why is None else f"not loaded: {why}\n{how}")


def launchd_uninstall(r: Runner) -> str:
    _need("darwin", "launchd", "cron")
    path = schedule.launchd_path(r.home)
    if not path.exists():
        return f"no launchd agent for HOLON_HOME={r.home}: nothing to remove"
    _run("launchctl", "unload", "-w", str(path))  # when launchctl is there
    path.unlink()
    return f"removed {path}"


def _need(platform: str, scheduler: str, instead: str) -> None:
    if not sys.platform.startswith(platform):
        name = {"linux": "Linux", "darwin": "macOS"}[platform]
        raise UsageError(
            f"{scheduler} entries are installed only on {name} (this is {sys.platform})",
            kind="unsupported_platform",
            hint=f"use `holon schedule {instead} --install`, or print the entry with "
            f"`holon schedule {scheduler}` to install it elsewhere",
        )


def _run(*argv: str) -> str | None:
    """None when the command ran and succeeded, else why not."""
    if not shutil.which(argv[0]):
        return f"{argv[0]} is not installed"
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")

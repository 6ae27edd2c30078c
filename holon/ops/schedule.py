"""Scheduler entries that run `holon tick --all`: a crontab line, a launchd plist, systemd units."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from holon.agent.timers import parse_duration

LAUNCHD_LABEL = "dev.holon.tick"
SYSTEMD_NAME = "holon-tick"


def holon_executable() -> str:
    found = shutil.which("holon")
    return os.path.realpath(found) if found else os.path.realpath(sys.argv[0])


def cron_line(exe: str, every: str = "1m") -> str:
    minutes = max(1, int(parse_duration(every) // 60))
    spec = "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    return f"{spec} {exe} tick --all >/dev/null 2>&1"


def launchd_plist(exe: str, every: str = "1m") -> str:
    seconds = max(1, int(parse_duration(every)))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{exe}</string>
    <string>tick</string>
    <string>--all</string>
  </array>
  <key>StartInterval</key>
  <integer>{seconds}</integer>
  <key>RunAtLoad</key>
  <true/>
</dict>
</plist>
"""


def systemd_units(exe: str, every: str = "1m") -> dict[str, str]:
    seconds = max(1, int(parse_duration(every)))
    service = f"""[Unit]
Description=holon: run due agent work (tick --all)

[Service]
Type=oneshot
ExecStart={exe} tick --all
"""
    timer = f"""[Unit]
Description=Run holon tick --all every {every}

[Timer]
OnBootSec={seconds}s
OnUnitActiveSec={seconds}s
AccuracySec=1s

[Install]
WantedBy=timers.target
"""
    return {f"{SYSTEMD_NAME}.service": service, f"{SYSTEMD_NAME}.timer": timer}


def launchd_path() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def systemd_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"

"""Is there anything for a tick to do? Answered from directory listings and one tiny file.

This is the idle hot path under cron: stdlib only, no JSON parsing of state,
no locks. It errs towards "due" — a tick that finds nothing is harmless.
"""

from __future__ import annotations

import os

from holon import clock
from holon.home.layout import Home
from holon.procs import alive


def _nonempty(path: os.PathLike) -> bool:
    try:
        with os.scandir(path) as it:
            return any(not e.name.startswith(".") for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


def due_reasons(home: Home) -> list[str]:
    """Why a tick should run for `home` (empty list: idle)."""
    new, cur, wake_hint, next_due_file, tasks_active = home.idle_files
    reasons = []
    if _nonempty(new):
        reasons.append("queued_messages")
    if _nonempty(cur):
        reasons.append("interrupted_messages")
    if os.path.exists(wake_hint):
        reasons.append("wake_hint")
    try:
        with open(next_due_file, "rb") as fh:
            next_due = float(fh.read().strip() or b"inf")
        if next_due <= clock.now_ts():
            reasons.append("timer_due")
    except (FileNotFoundError, ValueError):
        pass
    if _dead_task_supervisor(tasks_active):
        reasons.append("task_recovery")
    return reasons


def _dead_task_supervisor(active_dir: os.PathLike) -> bool:
    """A task whose supervisor process is gone needs recovery (its pid is the marker's content)."""
    try:
        entries = list(os.scandir(active_dir))
    except FileNotFoundError:
        return False
    for e in entries:
        try:
            with open(e.path, "rb") as fh:
                pid = int(fh.read().strip() or b"0")
        except (OSError, ValueError):
            return True
        if not alive(pid):
            return True
    return False

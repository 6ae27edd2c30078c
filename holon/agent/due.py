"""Is there anything for a tick to do? Answered from directory listings and one tiny file.

This is the idle hot path under cron: stdlib only, no JSON parsing of state,
no locks. It errs towards "due" — a tick that finds nothing is harmless. A
message deferred after a provider outage carries its not-before time in its
file name and is not due before then.

`stamp` says, with a few stats, whether anything the check reads may have changed since: the
periodic full pass of `tick --all` checks again only the homes whose stamp moved.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from holon import clock
from holon.home.layout import DOT, NEXT_DUE, QUEUE_CUR, QUEUE_NEW, TASKS_ACTIVE, Home
from holon.procs import supervises
from holon.store.queue import not_before_of


def _nonempty(path: os.PathLike) -> bool:
    try:
        with os.scandir(path) as it:
            return any(not e.name.startswith(".") for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _ready(path: os.PathLike, now: float) -> bool:
    """Does `path` (queue/new) hold a message that may run now (not deferred past `now`)?"""
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                at = not_before_of(e.name)
                if at is None or at <= now:
                    return True
    except (FileNotFoundError, NotADirectoryError):
        pass
    return False


class Due(NamedTuple):
    """What the idle check found: why a tick should run (empty: idle), the indexed next_due time
    (None: nothing scheduled; unreadable: 0.0), and whether a task is running (its supervisor
    alive), which keeps the agent in the host due index (holon.home.dueindex) while it runs."""

    reasons: list[str]
    next_due: float | None
    tasks_active: bool


def due_reasons(home: Home) -> list[str]:
    """Why a tick should run for `home` (empty list: idle)."""
    return check(home).reasons


def check(home: Home) -> Due:
    """The idle check of `home`: see `Due`."""
    new, cur, wake_hint, next_due_file, tasks_active = home.idle_files
    reasons = []
    now = clock.now_ts()
    if _ready(new, now):
        reasons.append("queued_messages")
    if _nonempty(cur):
        reasons.append("interrupted_messages")
    if os.path.exists(wake_hint):
        reasons.append("wake_hint")
    next_due: float | None = None
    try:
        with open(next_due_file, "rb") as fh:
            next_due = float(fh.read(64).strip())
        if not next_due > now:  # NaN too: an index that cannot be read is due (early, not late)
            reasons.append("timer_due")
    except FileNotFoundError:
        pass
    except (OSError, ValueError):  # unreadable or not a number: due, and that tick rewrites it
        next_due = 0.0
        reasons.append("timer_due")
    if next_due is not None and not math.isfinite(next_due):
        next_due = 0.0
    active, dead = _task_supervisors(tasks_active)
    if dead:
        reasons.append("task_recovery")
    dot = os.path.dirname(next_due_file)
    if any(_temp_left(os.path.join(dot, d)) for d in ("", "timers", "indexes")):
        reasons.append("crash_recovery")
    if _nonempty(os.path.join(dot, "patches")):  # an ApplyPatch journal: finish or undo it
        reasons.append("patch_recovery")
    return Due(reasons, next_due, active)


# what `check` reads, as paths under .holon ("" is .holon itself: the wake hint, next_due and
# patches come and go there, and so do its crash temps and state.json; "tasks" holds
# tasks/active), and those whose absence their parent's stamp vouches for (making one changes
# the parent's change time)
STAMPED = (
    "",
    "tasks",
    NEXT_DUE,
    "patches",
    TASKS_ACTIVE,
    QUEUE_NEW,
    QUEUE_CUR,
    "timers",
    "indexes",
)
_SKIPPABLE = frozenset((NEXT_DUE, "patches", TASKS_ACTIVE))
_TAILS = tuple((os.sep + name if name else "", name in _SKIPPABLE) for name in STAMPED)


class Stamp(NamedTuple):
    value: int
    absent: int  # bit i set: STAMPED[i] did not exist


def stamp(root: str, before: float, absent: int = 0) -> Stamp | None:
    """A number that changes whenever what `check` reads in the home at `root` may have changed:
    the inode and change time of .holon, next_due and each directory `check` lists (a ctime no
    writer can set back; a file added, removed or renamed in a directory changes the
    directory's). None when one of them changed after `before` (a change after the stamp could
    share its clock tick) or cannot be read: such a home is checked. The periodic full pass
    re-checks only homes whose stamp moved since the last one (holon.runtime.sweep).

    `absent`, the mask of an earlier stamp, spares the stats of the paths it found missing
    whose parent is stamped too: while the parent is unchanged they are still missing, and
    when it changed the value differs anyway. Such a value is for comparing only: a stamp to
    keep is taken without `absent`."""
    dot = os.path.join(root, DOT)
    limit = int(before * 1e9)
    parts: list[int] = []
    missing = 0
    for i, (tail, skippable) in enumerate(_TAILS):  # joined by hand: a full pass stamps all
        if skippable and absent >> i & 1:
            parts.append(0)
            missing |= 1 << i
            continue
        try:
            st = os.stat(dot + tail)
        except FileNotFoundError:
            parts.append(0)
            missing |= 1 << i
            continue
        except OSError:
            return None
        if st.st_ctime_ns >= limit:
            return None
        parts += (st.st_ino, st.st_ctime_ns)
    return Stamp(hash(tuple(parts)), missing)  # ints hash alike in every process (no salt)


def _temp_left(directory: str) -> bool:
    """Did a writer die between staging a file of `directory` and renaming it
    (`.<name>.tmp.<pid>`)? The tick's recovery removes what such a crash left."""
    try:
        with os.scandir(directory) as it:
            return any(e.name.startswith(".") and ".tmp." in e.name for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _task_supervisors(active_dir: os.PathLike) -> tuple[bool, bool]:
    """(any task marker, any task whose supervisor process is gone). A gone task needs recovery
    (its pid is the marker's content; a live pid that is not the task's supervisor, reused after
    a restore or reboot, is gone)."""
    try:
        entries = list(os.scandir(active_dir))
    except (FileNotFoundError, NotADirectoryError):
        return False, False
    for e in entries:
        try:
            with open(e.path, "rb") as fh:
                pid = int(fh.read().strip() or b"0")
        except (OSError, ValueError):
            return True, True
        if not supervises(pid, e.name):
            return True, True
    return bool(entries), False

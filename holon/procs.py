"""Process liveness, stdlib only (used on the idle path): zombies count as gone."""

from __future__ import annotations

import os


def alive(pid: int | None) -> bool:
    """Is `pid` a live process? A killed process nobody reaps (PID 1 in a container) is a zombie:
    gone."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"
    except OSError:
        return True


def _live_stats() -> list[tuple[int, list[bytes]]]:
    """(pid, the fields of /proc/<pid>/stat after the command name) of every live (non-zombie)
    process; [] without /proc."""
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2 :].split()
        if rest and rest[0] != b"Z":
            out.append((int(name), rest))
    return out


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`, read from /proc."""
    return [pid for pid, rest in _live_stats() if int(rest[2]) == pgid]


def group_leaders(needle: bytes) -> list[tuple[int, int]]:
    """(pid, parent pid) of each live process-group leader whose command line holds `needle` as
    one argument, read from /proc ([] without /proc)."""
    return [
        (pid, int(rest[1]))
        for pid, rest in _live_stats()
        if int(rest[2]) == pid and needle in proc_file(pid, "cmdline").split(b"\0")
    ]


NO_PROC = b"\0no-proc\0"


def proc_file(pid: int, name: str) -> bytes:
    """/proc/<pid>/<name>, b"" when the process or file is gone, NO_PROC where there is no /proc
    at all (macOS)."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return b"" if os.path.isdir("/proc/self") else NO_PROC
    except OSError:
        return b""


def supervises(pid: int | None, task_id: str) -> bool:
    """Is `pid` alive and, where /proc tells, a process whose command line names `task_id` (a
    task's supervisor)? After a restore or a reboot a pid in a marker may be someone else's."""
    if not alive(pid):
        return False
    cmdline = proc_file(int(pid or 0), "cmdline")
    return cmdline is NO_PROC or task_id.encode() in cmdline.split(b"\0")

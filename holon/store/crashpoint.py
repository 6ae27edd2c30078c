"""Crash points: stop a holon process at the N-th durable step of its run, for crash tests.

Every durable step (a write, fsync'd append, link, rename or unlink that a
later reader depends on) calls `step(name)` first. Two environment variables,
read once when this module is imported and then removed from the environment
so that child processes (task supervisors, commands) do not inherit them:

    HOLON_CRASH_TRACE=FILE   append one line per step, `<pid> <n> <name>`, to FILE
    HOLON_CRASH_AT=SPEC      act at a chosen step; SPEC is `[PATTERN:]N[:ACTION]`:
        PATTERN  fnmatch pattern over step names (default `*`: every step counts)
        N        the N-th matching step of this process (1-based)
        ACTION   kill (SIGKILL before the step, the default), torn (a write step
                 writes half of its bytes, then SIGKILL), enospc (the step
                 raises OSError ENOSPC, as a full disk would) or powerloss (the
                 bytes appended but not yet fsynced are cut off, as a power loss
                 before the next barrier would, then SIGKILL: holon.store.groupcommit)

Without either variable `step` is a single attribute test.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable

_TRACE = os.environ.pop("HOLON_CRASH_TRACE", None)
_SPEC = os.environ.pop("HOLON_CRASH_AT", None)
ARMED = bool(_TRACE or _SPEC)

_count = 0  # steps seen (traced)
_matched = 0  # steps matching PATTERN
_pattern = "*"
_target = 0
_action = "kill"
# what knows of appended bytes not yet durable: each gives {path: size that is durable}
_UNSYNCED: list[Callable[[], dict[str, int]]] = []


def _parse(spec: str) -> None:
    global _pattern, _target, _action
    parts = spec.split(":")
    if parts and parts[-1] in ("kill", "torn", "enospc", "powerloss"):
        _action = parts.pop()
    if not parts or not parts[-1].isdigit():
        raise SystemExit(f"holon: HOLON_CRASH_AT={spec!r}: expected [PATTERN:]N[:ACTION]")
    _target = int(parts.pop())
    if parts:
        _pattern = ":".join(parts)


if _SPEC:
    _parse(_SPEC)


def track_unsynced(source: Callable[[], dict[str, int]]) -> None:
    """Register what reports appended bytes not yet fsynced (a `powerloss` crash drops them)."""
    _UNSYNCED.append(source)


def _kill() -> None:
    if _action == "powerloss":
        for source in _UNSYNCED:
            for path, size in source().items():
                try:
                    os.truncate(path, size)
                except OSError:
                    pass  # removed since: nothing of it to lose
    os.kill(os.getpid(), signal.SIGKILL)


def _hit(name: str) -> bool:
    """Count the step; True when it is the chosen one."""
    global _count, _matched
    _count += 1
    if _TRACE:
        with open(_TRACE, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {_count} {name}\n")
    if not _SPEC:
        return False
    from fnmatch import fnmatchcase

    if not fnmatchcase(name, _pattern):
        return False
    _matched += 1
    return _matched == _target


def step(name: str) -> None:
    """A durable step named `name` is about to happen."""
    if ARMED and _hit(name):
        if _action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _kill()


def write_step(name: str, fd: int, data: bytes | memoryview) -> bool:
    """Like `step`, for a step that writes `data` to `fd`. A `torn` crash writes the first half
    first. Returns True when it wrote nothing (the caller writes)."""
    if ARMED and _hit(name):
        if _action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if _action == "torn" and len(data) > 1:
            os.write(fd, bytes(data[: len(data) // 2]))
        _kill()
    return True

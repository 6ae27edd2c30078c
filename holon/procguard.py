"""Keep what a holon process holds (provider keys, the environment it was started with) from
other processes of the same user: `PR_SET_DUMPABLE 0`.

Linux lets a process read another's `/proc/<pid>/environ` (and open `mem`) when both run as the
same user and the target is dumpable; a non-dumpable target needs CAP_SYS_PTRACE, which the
agent's commands never keep (holon.sandbox.caps). Being non-dumpable also makes `/proc/<pid>/`
owned by root and disables core dumps. It survives fork and is reset by execve, so the agent's
commands (and the supervisor's python) start dumpable again and are set again where it matters.

Called where a process comes to hold a secret: at start when its environment carries a
credential-like name, when it reads the keys file, and before it starts a command.
"""

from __future__ import annotations

import os
import sys

SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_PR_SET_DUMPABLE = 4
_done = False


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def undumpable() -> None:
    """Make this process non-dumpable (Linux; a no-op elsewhere and after the first call)."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_DUMPABLE): {os.strerror(err)}")
    _done = True


def guard_environment(environ: os._Environ | dict[str, str] = os.environ) -> None:
    """At start: non-dumpable when the environment holds anything credential-like (an idle tick
    started by cron with no secret in its environment pays nothing)."""
    if any(looks_secret(name) for name in environ):
        undumpable()

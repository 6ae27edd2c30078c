"""How a command's failure reaches the operator: `holon: <kind>: <message>` and a `hint:` line on
stderr, and the exit code of the contract (0 success, 1 failed, 2 usage or bad input, 3 not
runnable, 130 interrupted; 0 when the reader of stdout closed the pipe, as `| head` does). Never
a traceback, unless HOLON_DEBUG=1 asks for one. Stdlib only: the click-free admission path
(holon.cli.entry) reports through it too."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

# errno -> (kind, hint) of an OSError that reaches the CLI; anything else is io_error
_OS_ERROR = ("io_error", "check the path, its permissions and the disk, then run the command again")
_DISK_FULL = (
    "disk_full",
    "free space on the disk of the agent home, then run the command again; nothing was "
    "half-written",
)
_OS_ERRORS: dict[int | None, tuple[str, str]] = {
    errno.ENOSPC: _DISK_FULL,
    errno.EDQUOT: _DISK_FULL,
    errno.EROFS: ("read_only", "the agent home is on a read-only file system"),
}
_BUSY_HINT = (
    "another tick or command is working on it: wait for it to finish, then run the command again"
)


def guarded(run: Callable[[], int]) -> int:
    """`run()`'s exit code, or the report and exit code of what it raised."""
    from holon.cli.pipes import ReaderGone
    from holon.errors import HolonError
    from holon.store.locks import LockBusy

    try:
        return run()
    except (BrokenPipeError, ReaderGone):  # the reader closed the pipe (`| head`): not a failure
        _silence_broken_pipe()
        return 0
    except HolonError as exc:
        error(exc.kind, exc.message, exc.hint)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except LockBusy as exc:  # a lock wait ran out: another holon process holds it
        error("busy", f"another holon process holds the lock {exc}", _BUSY_HINT)
        return 1
    except OSError as exc:  # the machine said no: a full disk, a read-only or vanished file
        if os.environ.get("HOLON_DEBUG") == "1":
            raise
        kind, hint = _OS_ERRORS.get(exc.errno, _OS_ERROR)
        where = f": {exc.filename}" if exc.filename else ""
        error(kind, f"{exc.strerror or exc}{where}", hint)
        return 1
    except Exception as exc:  # a bug: say so plainly, trace only on request
        if os.environ.get("HOLON_DEBUG") == "1":
            raise
        error(
            "internal_error",
            f"{type(exc).__name__}: {exc}",
            "run again with HOLON_DEBUG=1 for a traceback",
        )
        return 1


def error(kind: str, message: str, hint: str | None) -> None:
    lines = f"holon: {kind}: {one_line(message)}\n" + (f"hint: {hint}\n" if hint else "")
    if sys.stderr is not None:
        sys.stderr.write(lines)
        sys.stderr.flush()


def one_line(message: str, limit: int = 600) -> str:
    """An error message as one bounded line: it may quote input of any size or shape."""
    flat = " ".join(str(message).splitlines())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _silence_broken_pipe() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass

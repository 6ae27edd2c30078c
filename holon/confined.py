"""A file an agent could have planted, read beneath a root it cannot leave.

The runtime reads files from places an agent's commands can write (AGENTS.md, memory files,
skills, plans, a workspace's instructions). Any of them may be a symlink to the provider keys or
`/proc/self/environ`, a FIFO that never answers, `/dev/zero`, or a huge file. `read` walks the
relative path one component at a time from a directory descriptor of the root:

1. each component is looked at without following it (lstat) and opened with
   O_NOFOLLOW | O_NONBLOCK (O_DIRECTORY for a directory), relative to the previous one;
2. a symlink is followed only when its target stays beneath the root: a relative target (or an
   absolute one inside the root) is walked the same way, `..` past the root is refused, and so is
   a chain of more than MAX_LINKS links;
3. the file must be a regular file (fstat of the open descriptor): a FIFO, a device, a socket or a
   directory is refused without being read;
4. at most `limit` bytes are read (one more shows that there is more; a size reported by stat is
   never trusted, /proc reports 0): more is refused, or with `truncate` cut and flagged.

A missing file is None; anything else wrong is `Refused` (path, reason, detail), never another
exception. Stdlib only (with holon.jsonfile's bounded read).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from holon import jsonfile

MAX_LINKS = 16
REASONS = ("symlink_escape", "symlink_loop", "not_regular", "too_large", "unreadable")
_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_DIRECTORY
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refused(Exception):
    """A file that was not read: `path` as asked for (never a link's target), `reason` (one of
    REASONS) and a one-line `detail` for people."""

    def __init__(self, path: str, reason: str, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path, self.reason, self.detail = path, reason, detail

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class Contents:
    data: bytes
    truncated: bool  # more than the limit was there (only with truncate=True)
    mtime_ns: int

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def read(
    root: str | os.PathLike, rel: str | os.PathLike, limit: int, *, truncate: bool = False
) -> Contents | None:
    """The regular file `rel` beneath directory `root` (see the module docstring); None when it
    (or the root) is missing."""
    shown = os.path.join(os.fspath(root), os.fspath(rel))
    try:
        fd = _open_beneath(os.fspath(root), os.fspath(rel), shown, directory=False)
    except FileNotFoundError:
        return None
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(shown, "not_regular", f"is {_kind(st.st_mode)}, not a regular file")
        data = jsonfile.read_fd(fd, limit + 1)
    except OSError as exc:
        raise Refused(shown, "unreadable", _why(exc)) from None
    finally:
        os.close(fd)
    if len(data) > limit and not truncate:
        raise Refused(shown, "too_large", f"is larger than {limit} bytes")
    return Contents(data[:limit], len(data) > limit, st.st_mtime_ns)


def names(root: str | os.PathLike, rel: str | os.PathLike, limit: int = 10_000) -> list[str] | None:
    """The sorted entry names of directory `rel` beneath `root` (at most `limit` of them, not
    starting with a dot); None when it is missing; Refused when it leads out of the root or is
    not a directory."""
    shown = os.path.join(os.fspath(root), os.fspath(rel))
    try:
        fd = _open_beneath(os.fspath(root), os.fspath(rel), shown, directory=True)
    except FileNotFoundError:
        return None
    if fd is None:
        return None
    out: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if not entry.name.startswith("."):
                    out.append(entry.name)
                if len(out) >= limit:
                    break
    except OSError as exc:
        raise Refused(shown, "unreadable", _why(exc)) from None
    finally:
        os.close(fd)
    return sorted(out)


def _open_beneath(root: str, rel: str, shown: str, *, directory: bool) -> int | None:
    """A descriptor of `rel` beneath `root` (opened O_NONBLOCK, never through a symlink that
    leaves the root); None when the root itself is missing; FileNotFoundError for a missing
    component."""
    if os.path.isabs(rel):
        raise Refused(shown, "symlink_escape", "is not a path relative to its root")
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(shown, "unreadable", f"is under {root}, which {_why(exc)}") from None
    stack = [root_fd]  # descriptors from the root down to the current directory
    todo = _parts(rel)
    links = 0
    try:
        while todo:
            name = todo.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise Refused(shown, "symlink_escape", f"leads out of {root}")
                os.close(stack.pop())
                continue
            st = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise Refused(shown, "symlink_loop", f"passes more than {MAX_LINKS} symlinks")
                todo = _link_parts(os.readlink(name, dir_fd=stack[-1]), root, shown) + todo
                if todo and todo[0] == "/":  # an absolute target inside the root: start over
                    todo.pop(0)
                    while len(stack) > 1:
                        os.close(stack.pop())
                continue
            last = not todo
            if not last or directory:
                if not stat.S_ISDIR(st.st_mode):
                    what = "is" if last else f"has {name!r}, which is"
                    raise Refused(shown, "not_regular", f"{what} {_kind(st.st_mode)}")
                stack.append(os.open(name, _DIR, dir_fd=stack[-1]))
            else:
                if not stat.S_ISREG(st.st_mode):  # refused before it is opened at all
                    raise Refused(shown, "not_regular", f"is {_kind(st.st_mode)}")
                stack.append(os.open(name, _FILE, dir_fd=stack[-1]))
        if len(stack) > 1:
            return stack.pop()  # the caller's now; the rest are closed below
        if not directory:
            raise Refused(shown, "not_regular", "is a directory")
        return os.dup(root_fd)
    except (FileNotFoundError, Refused):
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # replaced after it was looked at
            raise Refused(shown, "unreadable", "changed while it was read") from None
        raise Refused(shown, "unreadable", _why(exc)) from None
    finally:
        for fd in stack:
            os.close(fd)


def _parts(rel: str) -> list[str]:
    return [p for p in rel.split(os.sep) if p not in ("", ".")]


def _link_parts(target: str, root: str, shown: str) -> list[str]:
    """The components a symlink's target adds to the walk; an absolute target is allowed only
    inside the root (it then starts with "/", meaning: from the root)."""
    if not os.path.isabs(target):
        return _parts(target)
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        inside = os.path.relpath(os.path.normpath(target), base)
        if inside == "." or not (inside == ".." or inside.startswith(".." + os.sep)):
            return ["/", *_parts(inside)]
    raise Refused(shown, "symlink_escape", f"is a symlink leading out of {root}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _why(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "cannot be read (permission denied)"
    return f"cannot be read ({exc.strerror or type(exc).__name__})"

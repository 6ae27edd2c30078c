"""A private mount namespace for one command: read-only binds over the runtime's own directories,
and files masked, where Landlock's additive rights cannot reach (a `.holon/` inside a writable
workspace; a secrets file under a readable tree).

Decided in the parent, applied in the child: `plan` turns the decision into the mount(2) calls
with their arguments already encoded (the flags of each read-only remount read there too), so
that `apply`, run in the forked child before Landlock is applied, makes only system calls (the
child of a large process pays for every Python object it touches). Landlock forbids mount
changes afterwards, which also keeps the command from undoing these binds. Root unshares the
mount namespace alone; another user first enters a user namespace that maps only its own uid and
gid, so its rights outside are unchanged, and the binds it inherits there are locked.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_PR_SET_DUMPABLE = 4
_PROC_OPTIONS = b"hidepid=2,gid=2147483646"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
# statvfs f_flag bit -> the mount flag a remount must repeat (a user namespace may not drop them)
_KEEP = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME}
_ST_RELATIME = 4096
_HIDDEN = MS_NOSUID | MS_NODEV | MS_NOEXEC
_O_DIR_PATH = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC

# one mount(2): source, target, filesystem type, flags, data
Call = tuple[bytes | None, bytes, bytes | None, int, bytes | None]

_libc: ctypes.CDLL | None = None
_available: bool | None = None


@dataclass(frozen=True)
class Cover:
    """An empty read-only tmpfs over `target`, with the directories of `keep` bound back (made
    in the tmpfs first: `dirs`, each keep with its parents beneath the target)."""

    target: bytes
    keep: tuple[bytes, ...]
    dirs: tuple[bytes, ...]


@dataclass(frozen=True)
class Plan:
    """One command's namespace: `calls` in order (binds, read-only remounts, masks), then the
    covers, then (root) a procfs of its own."""

    calls: tuple[Call, ...]
    covers: tuple[Cover, ...]
    proc: bool


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mount.argtypes = (
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        )
    return _libc


def _call(result: int, what: str | bytes) -> None:
    if result != 0:
        err = ctypes.get_errno()
        name = f"mount {what.decode(errors='replace')}" if isinstance(what, bytes) else what
        raise OSError(err, f"{name}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter() -> None:
    """Unshare the mount namespace (through a user namespace unless root) and stop propagation."""
    lib = _lib()
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        _call(lib.unshare(_CLONE_NEWNS), "unshare")
    else:
        _call(lib.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
        # a non-dumpable process (holon.procguard) cannot open its own /proc files for writing;
        # dumpable only while the maps are written: the new user namespace already keeps every
        # process outside it from reading this one
        _call(lib.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        _call(lib.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl")
    _call(lib.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount /")


def plan(
    writable: list[str],
    read_only: list[str],
    masked: list[str],
    covers: list[tuple[str, list[str]]],
) -> Plan:
    """The namespace of one command, in the order it is made: `writable` directories bound onto
    themselves (with what is mounted beneath them), then each of `read_only` bound and remounted
    read-only (a remount touches only that mount, so a writable bind made beneath it earlier
    stays writable), then `/dev/null` bound over each of `masked` (reads are empty, writes
    vanish), then each cover: everything beneath a directory hidden behind an empty read-only
    tmpfs, what is not kept absent by name, whatever is later created or renamed there."""
    calls: list[Call] = [_bind(p) for p in writable]
    for p in read_only:
        calls += [_bind(p), (None, os.fsencode(p), None, _read_only_flags(p), None)]
    calls += [(b"/dev/null", os.fsencode(p), None, MS_BIND, None) for p in masked]
    return Plan(tuple(calls), tuple(_cover(t, keep) for t, keep in covers), os.getuid() == 0)


def _bind(path: str) -> Call:
    target = os.fsencode(path)
    return (target, target, None, MS_BIND | MS_REC, None)


def _read_only_flags(path: str) -> int:
    """The remount of a bind of `path`: read-only, repeating the flags of the mount it lies on."""
    st = os.statvfs(path)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for bit, flag in _KEEP.items():
        if st.f_flag & bit:
            flags |= flag
    if st.f_flag & _ST_RELATIME:
        flags |= MS_RELATIME
    return flags


def _cover(target: str, keep: list[str]) -> Cover:
    """`keep`: absolute paths beneath `target`, none inside another."""
    dirs: list[str] = []
    for k in keep:
        rel = os.path.relpath(k, target).split(os.sep)
        for depth in range(1, len(rel) + 1):
            d = os.path.join(target, *rel[:depth])
            if d not in dirs:
                dirs.append(d)
    encoded = (os.fsencode(target), tuple(map(os.fsencode, keep)), tuple(map(os.fsencode, dirs)))
    return Cover(*encoded)


def apply(ns: Plan) -> None:
    """Make the namespace of `ns` (in the forked child: system calls only)."""
    enter()
    mount = _lib().mount
    for call in ns.calls:
        _call(mount(*call), call[1])
    for cover in ns.covers:
        _apply_cover(mount, cover)
    if ns.proc:
        # a procfs of its own with hidepid=2: a process the command may not ptrace (every holon
        # process, every process with capabilities it lacks) is absent from it, command line
        # included (`holon keys set NAME VALUE` carries a key there); gid: the group exempt from
        # hidepid (default 0, root's own), one nobody is in. Root only: another user's namespace
        # does not own the PID namespace. Left as it is when the kernel refuses it.
        mount(b"proc", b"/proc", b"proc", _HIDDEN, _PROC_OPTIONS)


def _apply_cover(mount, cover: Cover) -> None:
    """The sources are held open (O_PATH) before the tmpfs covers them."""
    fds = [os.open(k, _O_DIR_PATH) for k in cover.keep]
    try:
        _call(mount(b"holon-hidden", cover.target, b"tmpfs", _HIDDEN, b"mode=0755"), cover.target)
        for d in cover.dirs:
            try:
                os.mkdir(d, 0o755)
            except FileExistsError:
                pass
        remount = MS_REMOUNT | MS_RDONLY | _HIDDEN
        _call(mount(None, cover.target, b"tmpfs", remount, None), cover.target)
        for k, fd in zip(cover.keep, fds, strict=True):
            _call(mount(b"/proc/self/fd/%d" % fd, k, None, MS_BIND | MS_REC, None), k)
    finally:
        for fd in fds:
            os.close(fd)


def available() -> bool:
    """Whether this process may make a private mount namespace (probed once, in a forked child)."""
    global _available
    if _available is None:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child exits at once
            try:
                enter()
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        _available = os.waitstatus_to_exitcode(status) == 0
    return _available

"""A private mount namespace for one command: read-only binds over the runtime's own directories,
and files masked, where Landlock's additive rights cannot reach (a `.holon/` inside a writable
workspace; a secrets file under a readable tree).

`isolate` runs in the forked child before Landlock is applied (Landlock forbids mount changes
afterwards, which also keeps the command from undoing these binds). Root unshares the mount
namespace alone; another user first enters a user namespace that maps only its own uid and gid,
so its rights outside are unchanged, and the binds it inherits there are locked.
"""

from __future__ import annotations

import ctypes
import os

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_PR_SET_DUMPABLE = 4
_PROC_OPTIONS = "hidepid=2,gid=2147483646"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
# statvfs f_flag bit -> the mount flag a remount must repeat (a user namespace may not drop them)
_KEEP = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME}
_ST_RELATIME = 4096

_libc: ctypes.CDLL | None = None
_available: bool | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(
    source: str | None, target: str, flags: int, fstype: str | None = None, data: str = ""
) -> None:
    src = source.encode() if source is not None else None
    kind = fstype.encode() if fstype is not None else None
    opts = data.encode() if data else None
    _call(_lib().mount(src, target.encode(), kind, ctypes.c_ulong(flags), opts), f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter() -> None:
    """Unshare the mount namespace (through a user namespace unless root) and stop propagation."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        _call(_lib().unshare(_CLONE_NEWNS), "unshare")
    else:
        _call(_lib().unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
        # a non-dumpable process (holon.procguard) cannot open its own /proc files for writing;
        # dumpable only while the maps are written: the new user namespace already keeps every
        # process outside it from reading this one
        _call(_lib().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        _call(_lib().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl")
    _mount(None, "/", MS_REC | MS_PRIVATE)


def bind(path: str, *, read_only: bool) -> None:
    """Bind `path` onto itself (with what is mounted beneath it), read-only if asked: a remount
    touches only this mount, so a writable bind made beneath it earlier stays writable."""
    _mount(path, path, MS_BIND | MS_REC)
    if read_only:
        st = os.statvfs(path)
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for bit, flag in _KEEP.items():
            if st.f_flag & bit:
                flags |= flag
        if st.f_flag & _ST_RELATIME:
            flags |= MS_RELATIME
        _mount(None, path, flags)


def mask(path: str) -> None:
    """Hide a file's content: `/dev/null` bound over it (reads are empty, writes vanish)."""
    _mount("/dev/null", path, MS_BIND)


def cover(path: str, keep: list[str]) -> None:
    """Hide everything beneath the directory `path` behind an empty read-only tmpfs, then bind
    back each directory of `keep` (absolute paths beneath `path`, none inside another) with the
    mounts made beneath it so far: what is not kept is absent by name, whatever is later created
    or renamed there. The sources are held open (O_PATH) before the tmpfs covers them."""
    fds = [os.open(k, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for k in keep]
    try:
        _mount("holon-hidden", path, MS_NOSUID | MS_NODEV | MS_NOEXEC, "tmpfs", "mode=0755")
        for k in keep:
            os.makedirs(k, mode=0o755, exist_ok=True)
        _mount(None, path, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "tmpfs")
        for k, fd in zip(keep, fds, strict=True):
            _mount(f"/proc/self/fd/{fd}", k, MS_BIND | MS_REC)
    finally:
        for fd in fds:
            os.close(fd)


def private_proc() -> bool:
    """Mount a procfs of its own over /proc with hidepid=2: a process the command may not
    ptrace (every holon process, every process with capabilities it lacks) is absent from it,
    command line included (`holon keys set NAME VALUE` carries a key there). Root only: another
    user's namespace does not own the PID namespace. False when the kernel refuses it."""
    if os.getuid() != 0:
        return False
    try:
        # gid: the group exempt from hidepid (default 0, root's own): one nobody is in
        _mount("proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "proc", _PROC_OPTIONS)
    except OSError:
        return False
    return True


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

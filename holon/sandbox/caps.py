"""The capabilities a command loses before it execs, in every mode (full-access included).

Root keeps the rights a package install or a build needs (file ownership and modes, DAC
override, setuid/setgid, network binds), and loses those that read other processes or undo the
sandbox:

- CAP_SYS_PTRACE: /proc/<pid>/environ, mem, root, cwd and fd of any process. Without it the
  kernel's ptrace access check also refuses every process whose capabilities are not a subset of
  the command's (every holon process and every full root process), dumpable or not.
- CAP_SYS_ADMIN, CAP_SYS_CHROOT: mount, setns into another mount namespace (the one without the
  masks), pivot_root; CAP_DAC_READ_SEARCH: open_by_handle_at, which opens a file by inode and so
  reaches a hidden path; CAP_MKNOD: a device node for the disk; CAP_SYS_RAWIO, CAP_SYS_MODULE,
  CAP_BPF, CAP_PERFMON, CAP_SYSLOG, CAP_CHECKPOINT_RESTORE, CAP_MAC_*: kernel memory, modules,
  tracing and /proc/<pid>/map_files.

They go from the bounding set (an exec cannot get them back; no_new_privs is set as well), the
ambient and inheritable sets, and the permitted and effective sets. A process without
capabilities (an unprivileged user without a user namespace) has nothing to drop.
"""

from __future__ import annotations

import ctypes
import os

CAP_DAC_READ_SEARCH, CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_CHROOT = 2, 16, 17, 18
CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_MKNOD = 19, 21, 27
CAP_MAC_OVERRIDE, CAP_MAC_ADMIN, CAP_SYSLOG = 32, 33, 34
CAP_PERFMON, CAP_BPF, CAP_CHECKPOINT_RESTORE = 38, 39, 40
DROPPED = (
    CAP_DAC_READ_SEARCH,
    CAP_SYS_MODULE,
    CAP_SYS_RAWIO,
    CAP_SYS_CHROOT,
    CAP_SYS_PTRACE,
    CAP_SYS_ADMIN,
    CAP_MKNOD,
    CAP_MAC_OVERRIDE,
    CAP_MAC_ADMIN,
    CAP_SYSLOG,
    CAP_PERFMON,
    CAP_BPF,
    CAP_CHECKPOINT_RESTORE,
)
_PR_CAPBSET_READ, _PR_CAPBSET_DROP = 23, 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _sets() -> tuple[_Header, ctypes.Array]:
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()
    _check(_lib().capget(ctypes.byref(header), data), "capget")
    return header, data


def drop() -> None:
    """Drop DROPPED from every capability set of the calling process (the forked child)."""
    lib = _lib()
    header, data = _sets()
    if not any(d.permitted or d.effective for d in data):
        return  # nothing to drop, and no right to change the bounding set
    for cap in DROPPED:
        if lib.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) == 1:
            _check(lib.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    lib.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3
    for cap in DROPPED:
        word, bit = divmod(cap, 32)
        mask = ~(1 << bit) & 0xFFFFFFFF
        data[word].effective &= mask
        data[word].permitted &= mask
        data[word].inheritable &= mask
    header.version, header.pid = _VERSION_3, 0
    _check(lib.capset(ctypes.byref(header), data), "capset")


def held(cap: int) -> bool:
    """Whether the calling process has `cap` in its effective set (for tests and show)."""
    _, data = _sets()
    word, bit = divmod(cap, 32)
    return bool(data[word].effective & (1 << bit))

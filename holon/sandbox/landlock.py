"""Landlock (Linux 5.13+) through its three system calls, with ctypes: no compiled extension, no
third-party binding.

A ruleset is built in the parent (`Ruleset`: one fd, one rule per path), then applied in the
forked child just before exec (`restrict`), which costs two system calls there. Rights are
additive: a rule grants its rights to a directory and everything beneath it, and nothing can
subtract them again, so the caller decides which directories get which rights.

The constants are those of <linux/landlock.h>; the rights a kernel knows grow with its ABI
version, and asking for one it does not know is EINVAL, so `handled_fs(abi)` masks them.
"""

from __future__ import annotations

import ctypes
import os
import platform

# syscall numbers: the same on every architecture that has them (the unified table, 5.13+)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a file may carry
_V1_ALL = (1 << 13) - 1


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_long = ctypes.c_long  # variadic syscall(2) reads every argument as a long
_libc: ctypes.CDLL | None = None
_abi: int | None = None


def _syscall():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
        _libc.prctl.restype = ctypes.c_int
    return _libc


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (not Linux, too old, or disabled)."""
    global _abi
    if _abi is None:
        _abi = 0
        if platform.system() == "Linux":
            try:
                found = _syscall().syscall(_long(_CREATE_RULESET), None, _long(0), _long(1))
            except (OSError, AttributeError):
                found = -1
            _abi = max(0, int(found))
    return _abi


def handled_fs(version: int) -> int:
    rights = _V1_ALL
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock: {what}: {os.strerror(err)}")
    return result


class Ruleset:
    """An unapplied ruleset: fs rights handled per the ABI, TCP denied when `deny_tcp`."""

    def __init__(self, version: int, *, deny_tcp: bool, scope_signals: bool = True) -> None:
        self.version = version
        self.fs = handled_fs(version)
        attr = _RulesetAttr(self.fs, 0, 0)
        size = 8
        if deny_tcp:
            if version < 4:
                raise LandlockError(0, "landlock: this kernel cannot deny TCP (needs ABI 4)")
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        if version >= 4:
            size = 16
        if version >= 6:
            size = 24
            if scope_signals:  # a command cannot signal the tick or the supervisor
                attr.scoped = SCOPE_SIGNAL
        self.fd = _check(
            _syscall().syscall(_long(_CREATE_RULESET), ctypes.byref(attr), _long(size), _long(0)),
            "create ruleset",
        )

    def allow(self, path: str, rights: int) -> None:
        """Grant `rights` (masked to what this ABI handles) on `path` and beneath it."""
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not os.path.isdir(path):
                rights &= FILE_RIGHTS
            rule = _PathBeneath(rights & self.fs, fd)
            _check(
                _syscall().syscall(
                    _long(_ADD_RULE), _long(self.fd), _long(1), ctypes.byref(rule), _long(0)
                ),
                f"add rule for {path}",
            )
        finally:
            os.close(fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def restrict(ruleset_fd: int) -> None:
    """Confine the calling process (and what it execs) to the ruleset: for the forked child."""
    lib = _syscall()
    _check(lib.prctl(_PR_SET_NO_NEW_PRIVS, _long(1), _long(0), _long(0), _long(0)), "no_new_privs")
    _check(lib.syscall(_long(_RESTRICT_SELF), _long(ruleset_fd), _long(0)), "restrict self")

"""macOS: the Seatbelt profile (SBPL) that `sandbox-exec -p` applies to a command, for the same
modes as Landlock on Linux. Later rules win in SBPL, so the protected paths are denied after
the writable roots are allowed."""

from __future__ import annotations

from holon.sandbox.policy import Policy

_BASE = """(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm ipc-posix-sem)
(allow pseudo-tty)
(allow file-read*)
(allow file-ioctl (regex #"^/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
(allow file-write-data file-write-create
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper")
  (regex #"^/dev/ttys[0-9]+$"))
"""


def quote(path: str) -> str:
    """An SBPL string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(policy: Policy, *, writable: list[str], protected: list[str], masked: list[str]) -> str:
    lines = [_BASE.rstrip("\n")]
    if policy.mode == "full-access":
        lines.append("(allow file-write*)")
    elif writable:
        lines.append(
            "(allow file-write* " + " ".join(f"(subpath {quote(p)})" for p in writable) + ")"
        )
    scratch = writable[-1:] if policy.mode != "full-access" else []
    if protected:
        lines.append(
            "(deny file-write* " + " ".join(f"(subpath {quote(p)})" for p in protected) + ")"
        )
        if scratch:  # the scratch directory lies inside .holon: writable again, last rule wins
            lines.append(f"(allow file-write* (subpath {quote(scratch[0])}))")
    if masked:
        lines.append("(deny file-read* " + " ".join(f"(literal {quote(p)})" for p in masked) + ")")
    if policy.network == "allow":
        lines.append("(allow network* system-socket)")
    else:  # local sockets only: no TCP or UDP to any host, loopback included
        lines.append("(allow network* (local unix) (remote unix))")
        lines.append("(allow system-socket (socket-domain AF_UNIX))")
    return "\n".join(lines) + "\n"

"""macOS: the Seatbelt profile (SBPL) that `sandbox-exec -p` applies to a command, for the same
modes as Landlock on Linux. Later rules win in SBPL, so $HOLON_HOME is denied after the writable
roots are allowed, the command's own places in it allowed again, and the protected paths and
secret files denied last (the scratch directory excepted)."""

from __future__ import annotations

from collections.abc import Sequence

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


def _rule(action: str, kind: str, paths: list[str]) -> str:
    return f"({action} " + " ".join(f"({kind} {quote(p)})" for p in paths) + ")"


def profile(
    policy: Policy,
    *,
    writable: list[str],
    protected: list[str],
    masked: list[str],
    hidden: str | None = None,
    kept: Sequence[str] = (),
    covered: Sequence[str] = (),
) -> str:
    """`hidden` ($HOLON_HOME) is denied whole, then `kept` (the command's own places in it)
    allowed again: as on Linux, by path, so a file renamed into place stays denied. `covered`
    (other agents' `.holon/` outside $HOLON_HOME) is denied whole."""
    lines = [_BASE.rstrip("\n")]
    if policy.mode == "full-access":
        lines.append("(allow file-write*)")
    elif writable:
        lines.append(_rule("allow file-write*", "subpath", writable))
    scratch = writable[-1:] if policy.mode != "full-access" else []
    if hidden:
        lines.append(_rule("deny file-read* file-write*", "subpath", [hidden]))
        if kept:
            lines.append(_rule("allow file-read*", "subpath", list(kept)))
            if policy.mode == "full-access":
                lines.append(_rule("allow file-write*", "subpath", list(kept)))
            else:
                mine = [k for k in kept if any(k == w or k.startswith(w + "/") for w in writable)]
                if mine:
                    lines.append(_rule("allow file-write*", "subpath", mine))
    if protected:
        lines.append(_rule("deny file-write*", "subpath", protected))
        if scratch:  # the scratch directory lies inside .holon: writable again, last rule wins
            lines.append(f"(allow file-write* (subpath {quote(scratch[0])}))")
    if covered:
        lines.append(_rule("deny file-read* file-write*", "subpath", list(covered)))
    if masked:
        lines.append(_rule("deny file-read*", "literal", masked))
    if policy.network == "allow":
        lines.append("(allow network* system-socket)")
    else:  # local sockets only: no TCP or UDP to any host, loopback included
        lines.append("(allow network* (local unix) (remote unix))")
        lines.append("(allow system-socket (socket-domain AF_UNIX))")
    return "\n".join(lines) + "\n"

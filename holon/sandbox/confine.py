"""Confine one command to its agent's sandbox policy: decide in the parent, apply in the child.

`prepare()` returns a Confinement: the environment, an argv prefix (macOS: `sandbox-exec -p`) and a
`preexec` for the forked child (Linux). On Linux, in order:

1. When a protected path (this agent's `.holon/`, holon's own files in $HOLON_HOME) lies inside a
   writable root, the child enters a private mount namespace and binds it read-only over itself
   (the command's scratch directory, inside `.holon/scratch/`, is bound writable first), and
   masks the secret files (keys.json, the admission key) with /dev/null; then it changes to its
   working directory again, so no directory handle of the old mount survives.
2. Landlock: reads everywhere; writes only beneath the mode's writable roots, the scratch
   directory and device files; TCP connect and bind denied when the network is; signals
   outside the sandbox denied (ABI 6). Without a mount namespace, a writable root that contains a
   protected path is granted entry by entry around it (new files directly in such a directory
   are then refused; reported by `holon sandbox show`).

Everything is decided in the parent (the places of holon.sandbox.places, the mount calls that
mountns.plan encodes, the ruleset): the forked child of a large process pays for every Python
object it touches, so it only makes system calls before exec.

Fail closed: a mode other than full-access, or a denied network, that the kernel cannot enforce
raises `sandbox_unavailable` before anything starts.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from holon import paths, procguard
from holon.errors import HolonError, OperationFailed
from holon.home.layout import Home
from holon.sandbox import caps, landlock, mountns, places
from holon.sandbox.policy import Policy, command_env, read

DEVICE_RIGHTS = landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE
SANDBOX_EXEC = "/usr/bin/sandbox-exec"


class SandboxUnavailable(OperationFailed):
    kind = "sandbox_unavailable"


@dataclass
class Confinement:
    policy: Policy
    env: dict[str, str]
    enforcement: str  # "landlock+mountns", "landlock", "seatbelt" or "none"
    preexec: Callable[[], None] | None = None
    argv_prefix: list[str] = field(default_factory=list)
    ruleset: landlock.Ruleset | None = None

    def close(self) -> None:
        """Release the parent's ruleset fd once the child has started."""
        if self.ruleset is not None:
            self.ruleset.close()
            self.ruleset = None


def prepare(home: Home, *, execution_root: Path, workdir: Path, scratch: Path) -> Confinement:
    """The confinement for one command of `home`; `scratch` must exist."""
    policy = read(home)
    procguard.undumpable()  # this process starts the command: its environment is not the command's
    env = command_env(dict(os.environ), policy, home)
    if policy.mode == "read-only":
        env["TMPDIR"] = str(scratch)
    refused = refusal(policy)
    if refused:
        raise refused
    if sys.platform == "darwin":
        from holon.sandbox import seatbelt

        if not _has_sandbox_exec():
            return Confinement(policy, env, "none")  # full-access, network allowed: chosen
        writable = places.writable_roots(policy, execution_root, home) + [places.real(scratch)]
        hidden = places.real(paths.holon_home())
        profile = seatbelt.profile(
            policy,
            writable=writable,
            protected=places.protected_paths(home),
            masked=places.secret_files(home),
            hidden=hidden,
            kept=places.kept_in_holon_home(home, hidden, [places.real(execution_root), *writable]),
            covered=places.other_homes(home, hidden),
        )
        return Confinement(policy, env, "seatbelt", argv_prefix=[SANDBOX_EXEC, "-p", profile])
    with places.one_view():
        return _linux(home, policy, env, execution_root, workdir, scratch)


def _has_sandbox_exec() -> bool:
    return os.access(SANDBOX_EXEC, os.X_OK)


def refusal(policy: Policy) -> SandboxUnavailable | None:
    """Fail closed: why this system cannot enforce `policy`, or None when it can (full-access
    with the network allowed needs nothing from the kernel)."""
    if policy.mode == "full-access" and policy.network == "allow":
        return None
    if sys.platform == "darwin":
        has = _has_sandbox_exec()
    else:
        abi = landlock.abi()
        if abi and policy.network == "deny" and abi < 4:
            return SandboxUnavailable(
                f"this kernel's Landlock (ABI {abi}) cannot deny TCP; ABI 4 (Linux 6.7) can",
                hint="allow the network (holon sandbox set AGENT MODE --network allow) "
                "or upgrade the kernel",
            )
        has = abi > 0
    if has:
        return None
    return SandboxUnavailable(
        f"this system cannot enforce the {policy.label} sandbox (no Landlock or sandbox-exec)",
        hint="enable Landlock in the kernel, or choose explicitly: "
        "holon sandbox set AGENT full-access --network allow",
    )


def _linux(
    home: Home, policy: Policy, env: dict[str, str], root: Path, workdir: Path, scratch: Path
) -> Confinement:
    abi = landlock.abi()
    if abi == 0:  # full-access, network allowed: chosen; still no capability to read others
        return Confinement(policy, env, "none", preexec=caps.drop)
    scratch_s, workdir_s = places.real(scratch), str(workdir)
    roots = places.writable_roots(policy, root, home)
    hidden = places.real(paths.holon_home())
    keep = places.kept_in_holon_home(home, hidden, [places.real(root), scratch_s, *roots])
    protected = places.protected_paths(home)
    others = places.other_homes(home, hidden)
    ns = _namespace(home, roots, protected, others, hidden, keep, scratch_s)
    # without a mount namespace nothing is hidden, but every other agent's place in $HOLON_HOME
    # stays out of the write grants: granted entry by entry around it, like `.holon/`
    protected = sorted({*protected, *others})
    fenced = [*protected, hidden] if os.path.isdir(hidden) else protected
    ruleset = _ruleset(abi, policy, roots, scratch_s, ns is not None, protected, fenced, keep)
    fd = ruleset.fd

    def preexec() -> None:
        if ns is not None:
            mountns.apply(ns)
            os.chdir(workdir_s)
        landlock.restrict(fd)
        caps.drop()

    enforcement = "landlock+mountns" if ns is not None else "landlock"
    return Confinement(policy, env, enforcement, preexec=preexec, ruleset=ruleset)


def _namespace(
    home: Home,
    roots: list[str],
    protected: list[str],
    others: list[str],
    hidden: str,
    keep: list[str],
    scratch: str,
) -> mountns.Plan | None:
    """The mount namespace's part, or None when nothing needs it or the system has none: the
    protected paths inside a writable root bound read-only (the writable places beneath them
    bound first), the secret files masked, and the covers."""
    cover = os.path.isdir(hidden)

    def covered(path: str) -> bool:
        """Out of sight beneath the cover of $HOLON_HOME, nothing of it bound back: no read-only
        bind or mask needed (holon's own files there, when $HOLON_HOME lies in a writable root)."""
        near = any(places.inside(path, k) or places.inside(k, path) for k in keep)
        return cover and places.inside(path, hidden) and not near

    inside = [p for p in protected if any(places.inside(p, r) for r in roots) and not covered(p)]
    masked = [k for k in places.secret_files(home) if os.path.isfile(k) and not covered(k)]
    creds = places.credential_dirs(hidden)
    siblings = places.sibling_covers(home)
    if not (inside or masked or cover or creds or siblings or others) or not mountns.available():
        return None
    if os.getuid() == 0:
        masked += places.block_devices()
    # writable places beneath a protected one, bound first: a read-only remount above them
    # leaves them writable (the scratch in `.holon/`; a private child's home in its parent's)
    home_s = places.real(home.root)
    binds = [w for w in (scratch, home_s) if w in roots or w == scratch]
    binds = [w for w in binds if any(places.inside(w, p) and w != p for p in inside)]
    covers = [(c, [own]) for c, own in siblings] + ([(hidden, keep)] if cover else [])
    covers += [(p, []) for p in [*creds, *others]]
    try:
        return mountns.plan(binds, inside, masked, covers)
    except OSError as exc:  # a protected path removed since it was listed
        raise SandboxUnavailable(
            f"could not build the sandbox: {exc}", hint="run `holon sandbox show AGENT`"
        ) from None


def _ruleset(
    abi: int,
    policy: Policy,
    roots: list[str],
    scratch: str,
    use_ns: bool,
    protected: list[str],
    fenced: list[str],
    keep: list[str],
) -> landlock.Ruleset:
    """Landlock's part: read everywhere, write beneath the roots (entry by entry around the
    protected and fenced paths without a mount namespace) and the scratch directory."""
    ruleset = landlock.Ruleset(abi, deny_tcp=policy.network == "deny")
    try:
        everything = landlock.handled_fs(abi)
        ruleset.allow("/", landlock.READ)
        ruleset.allow("/dev", DEVICE_RIGHTS)
        for r in roots:
            if use_ns:
                ruleset.allow(r, everything)
                continue
            for path in places.around(r, protected if places.under_any(r, keep) else fenced):
                try:
                    ruleset.allow(path, everything)
                except FileNotFoundError:  # removed since the directory was listed
                    pass
        ruleset.allow(scratch, everything)
    except OSError as exc:
        ruleset.close()
        raise SandboxUnavailable(
            f"could not build the sandbox: {exc}", hint="run `holon sandbox show AGENT`"
        ) from None
    return ruleset


def describe(home: Home) -> dict:
    """What `holon sandbox show`, status and doctor report: the policy and whether it holds."""
    policy = read(home)
    abi = landlock.abi() if sys.platform.startswith("linux") else 0
    out = {"agent_id": home.agent_id, **policy.to_json(), "source": policy.source}
    out["enforced"] = refusal(policy) is None
    if sys.platform == "darwin":
        out["enforcement"] = "seatbelt" if _has_sandbox_exec() else "none"
    else:
        out["landlock_abi"] = abi
        out["mount_namespace"] = mountns.available() if abi else False
        if abi == 0:
            out["enforcement"] = "none"
        else:
            out["enforcement"] = "landlock+mountns" if out["mount_namespace"] else "landlock"
    out["protected"] = places.protected_paths(home)
    hides = out["enforcement"] in ("landlock+mountns", "seatbelt")
    hidden = places.real(paths.holon_home())  # save the agent's own places in it
    out["hidden"] = (
        [hidden, *places.credential_dirs(hidden), *places.other_homes(home, hidden)]
        if hides
        else []
    )
    out["scratch"] = str(home.scratch)
    out["temp_dirs"] = [d for d in places.TEMP_DIRS if os.path.isdir(d)] or [tempfile.gettempdir()]
    return out


def summary(home: Home) -> dict:
    """The status line's part: mode, network, enforcement; an invalid config is reported, not
    raised (status must show the rest)."""
    try:
        doc = describe(home)
    except HolonError as exc:
        return {"error": exc.to_dict()}
    keys = ("mode", "network", "enforcement", "enforced", "source")
    return {k: doc[k] for k in keys}


def refused_write(home: Home, execution_root: Path, targets: list[Path]) -> tuple[str, str] | None:
    """For a runtime tool that writes files itself (ApplyPatch): the first target the agent's
    sandbox refuses, with the reason, or None. The same rule as for commands: never inside a
    protected path, nowhere in read-only, only beneath the writable roots otherwise."""
    policy = read(home)
    protected = places.protected_paths(home)
    roots = places.writable_roots(policy, execution_root, home)
    own, own_dot = places.real(home.root), places.real(home.dot)
    for target in targets:
        real = os.path.join(places.real(target.parent), target.name)
        # a child's home lies in its parent's
        mine = places.inside(real, own) and not places.inside(real, own_dot)
        if not mine and any(places.inside(real, p) for p in protected):
            return str(target), "it is the runtime's own state, read-only to the agent's tools"
        if policy.mode == "read-only":
            return str(target), "the read-only sandbox allows no file changes"
        if not any(places.inside(real, r) for r in roots):
            return str(target), f"it is outside the writable roots of the {policy.mode} sandbox"
    return None

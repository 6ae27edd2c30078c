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

Fail closed: a mode other than full-access, or a denied network, that the kernel cannot enforce
raises `sandbox_unavailable` before anything starts.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from holon import paths, procguard
from holon.errors import HolonError, OperationFailed
from holon.home import registry
from holon.home.layout import DOT, Home
from holon.sandbox import caps, landlock, mountns
from holon.sandbox.policy import Policy, command_env, read

TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
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


_resolved: dict[str, str] | None = None  # realpath answers within one decision (`_one_view`)
_registered: tuple[tuple | None, list[str]] = (None, [])  # registry.json's stat, its homes


def _real(path: str | os.PathLike) -> str:
    if _resolved is None:
        return os.path.realpath(path)
    return _resolve(_resolved, os.fspath(path))


def _resolve(known: dict[str, str], path: str) -> str:
    """realpath(path), from the resolved parent where the last part is no symlink (one lstat):
    the home, HOLON_HOME and their neighbours share most of their parents."""
    found = known.get(path)
    if found is not None:
        return found
    head, tail = os.path.split(path)
    found = None
    if os.path.isabs(path) and head != path and tail not in ("", ".", ".."):
        try:
            plain = not stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            plain = False  # missing: realpath's own answer
        if plain:
            found = os.path.join(_resolve(known, head), tail)
    known[path] = found = found or os.path.realpath(path)
    return found


@contextmanager
def _one_view() -> Iterator[None]:
    """Within one decision each path is resolved once (the home, HOLON_HOME and the lineage are
    asked for by every part of it): fewer system calls, and one answer for every part."""
    global _resolved
    _resolved = {}
    try:
        yield
    finally:
        _resolved = None


def registered_roots() -> list[str]:
    """The resolved home paths of registry.json, read and resolved again only when the file was
    replaced (it always is, atomically: a new inode), so a tick's commands do not each parse and
    resolve a registry of thousands. A home moved since is no better found by resolving its old
    path again: a cover follows a symlink put in its place all the same."""
    global _registered
    path = paths.registry_path()
    try:
        st = os.stat(path)
        key: tuple | None = (str(path), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is None or _registered[0] != key:
        found, _ = registry.load_or_none()
        _registered = (key, [os.path.realpath(p) for p in found.values()])
    return _registered[1]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected_paths(home: Home) -> list[str]:
    """What no command may write: the agent's `.holon/`, those of the agents above a private
    child, and holon's own files in $HOLON_HOME (config, keys, registry, logs), not the agent
    homes nor the managed worktrees kept there."""
    found = [_real(agent.dot) for agent in lineage(home)]
    try:
        entries = list(os.scandir(paths.holon_home()))
    except OSError:
        entries = []
    kept = {_real(paths.agents_dir()), _real(paths.worktrees_dir())}
    root, base = _real(home.root), _real(paths.holon_home())
    for entry in entries:  # an entry that is no symlink resolves to itself in the resolved base
        real = _real(entry.path) if entry.is_symlink() else os.path.join(base, entry.name)
        if real not in kept and not _inside(root, real):
            found.append(real)
    return sorted(p for p in set(found) if os.path.lexists(p))


def secret_files(home: Home) -> list[str]:
    """Files no command may read: holon's provider keys and the keys that seal admitted messages
    (holon.agent.seal) of the agent and of the agents above a private child. In a mount
    namespace $HOLON_HOME is hidden whole and these are masked where still visible (seatbelt:
    denied); Landlock alone cannot."""
    keys = _real(paths.holon_home() / "keys.json")
    return [keys, *(_real(agent.admission_key) for agent in lineage(home))]


def sibling_covers(home: Home) -> list[tuple[str, str]]:
    """For each agent above a private child: its children directory and the one home in it on
    the way down to this agent. Covered so, the other children there (their queues and admission
    keys) are absent by name, however many there are or are made later."""
    pairs = pairwise(lineage(home))
    return [(_real(above.children_dir), _real(below.root)) for below, above in pairs]


def other_homes(home: Home, hidden: str) -> list[str]:
    """The `.holon/` of every registered agent outside $HOLON_HOME but those of this agent's
    lineage (`holon init PATH` puts a home anywhere, /tmp included): covered whole in the mount
    namespace, so their queues, ledgers and admission keys are absent by name, and kept out of
    the write grants without one. Agents inside $HOLON_HOME cost nothing here (hidden with it);
    one mount per agent registered elsewhere."""
    mine = {_real(agent.root) for agent in lineage(home)}
    found = set()
    for root in registered_roots():
        dot = os.path.join(root, DOT)
        if not _inside(root, hidden) and root not in mine and os.path.isdir(dot):
            found.add(dot)
    return sorted(found)


def credential_dirs(hidden: str) -> list[str]:
    """Other directories holding a provider's credentials, hidden whole like $HOLON_HOME: the
    Codex CLI's home when it holds an auth.json (it rewrites the file when it refreshes)."""
    auth = paths.codex_auth_file()
    if not auth.is_file():
        return []
    found = _real(auth.parent)
    return [] if _inside(found, hidden) or found == "/" else [found]


def block_devices() -> list[str]:
    """The disks' device nodes (/dev/vda, ...), masked for root's commands: reading a disk needs
    no capability, only the node's mode, and a filesystem reader on it (debugfs) finds a hidden
    file by name. Another user has no right to them anyway."""
    try:
        names = os.listdir("/sys/class/block")
    except OSError:
        return []
    found = (os.path.join("/dev", n) for n in names if "/" not in n)
    return sorted(p for p in found if os.path.exists(p))


def linked_git_dir(root: Path) -> str | None:
    """The common git directory of a linked worktree at `root` (its `.git` is a file naming
    `<common>/worktrees/<name>`): commits made in the worktree write there. Only when the
    repository names this worktree back (`<common>/worktrees/<name>/gitdir` is `root/.git`):
    the command writes `.git` itself, and a file naming a directory of its own with a
    `commondir` of `/` would otherwise make the whole file system writable to the next one."""
    text = _head(root / ".git")
    if not text.startswith("gitdir: "):
        return None
    gitdir = Path(_real(root / text[len("gitdir: ") :].strip()))  # relative: to the worktree
    common = Path(_real(gitdir / _head(gitdir / "commondir").strip()))
    back = _head(gitdir / "gitdir").strip()
    if not back or gitdir != common / "worktrees" / gitdir.name:
        return None
    if _real(gitdir / back) != _real(root / ".git"):
        return None
    return str(common)


def _head(path: Path) -> str:
    """The start of a small text file, "" when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return ""


def _under_any(path: str, roots: list[str]) -> bool:
    return any(_inside(path, r) for r in roots)


def lineage(home: Home) -> list[Home]:
    """The agent and the agents above it (a private child lives in its parent's `.holon/`)."""
    out = [home]
    while out[-1].parent_root is not None:
        out.append(Home(out[-1].parent_root))
    return out


def kept_in_holon_home(home: Home, hidden: str, wanted: list[str]) -> list[str]:
    """What a command still sees of $HOLON_HOME (`hidden`, covered whole in its mount namespace):
    the directories of `wanted` (its execution, scratch and writable roots), its own home and
    its managed worktrees, outermost only, and only where they lie in its lineage's homes or
    worktrees (a private child works in its parent's workspace; its `.holon/` stays read-only
    and its key masked). Neither the keys, the registry, the config and logs nor any other
    agent's home, whatever the workspace names. A fixed number of mounts, whatever the number of
    agents."""
    mine = [_real(paths.worktrees_dir() / home.agent_id), _real(home.root)]
    bases = [*mine]
    for agent in lineage(home)[1:]:
        bases += [_real(agent.root), _real(paths.worktrees_dir() / agent.agent_id)]
    found = sorted(
        {
            w
            for w in [*wanted, *mine]
            if _inside(w, hidden) and w != hidden and _under_any(w, bases) and os.path.isdir(w)
        },
        key=len,
    )
    out: list[str] = []
    for w in found:
        if not _under_any(w, out):
            out.append(w)
    return out


def writable_roots(policy: Policy, execution_root: Path, home: Home | None = None) -> list[str]:
    """The directories a command may write: the execution root (with the git directory of a
    linked worktree), the agent home when the agent works elsewhere (its memory and notes; its
    `.holon/` stays protected), the temporary directories and the policy's extra roots."""
    if policy.mode == "read-only":
        return []
    if policy.mode == "full-access":
        return ["/"]
    roots = [_real(execution_root), *TEMP_DIRS, *policy.writable_roots]
    if home is not None:
        roots.append(_real(home.root))
    git_dir = linked_git_dir(execution_root)
    if git_dir:
        roots.append(git_dir)
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir:
        roots.append(tmpdir)
    return sorted({_real(r) for r in roots if os.path.isdir(r)})


def around(root: str, protected: list[str]) -> list[str]:
    """Entries beneath `root` that contain no protected path, found by walking down towards each
    protected path: granting each of them grants `root` minus the protected paths (and minus new
    entries directly in the directories on the way). Symlinks are never granted."""
    out: list[str] = []
    inner = [p for p in protected if _inside(p, root) and p != root]
    if not inner and not any(_inside(root, p) for p in protected):
        return [root]
    if not inner:
        return []  # root itself is protected
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            continue
        path = os.path.join(root, entry.name)
        if any(_inside(path, p) for p in inner):
            continue  # protected itself, whatever lies beneath it
        if any(_inside(p, path) for p in inner):
            if entry.is_dir(follow_symlinks=False):
                out += around(path, inner)
        else:
            out.append(path)
    return out


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
        writable = writable_roots(policy, execution_root, home) + [_real(scratch)]
        hidden = _real(paths.holon_home())
        profile = seatbelt.profile(
            policy,
            writable=writable,
            protected=protected_paths(home),
            masked=secret_files(home),
            hidden=hidden,
            kept=kept_in_holon_home(home, hidden, [_real(execution_root), *writable]),
            covered=other_homes(home, hidden),
        )
        return Confinement(policy, env, "seatbelt", argv_prefix=[SANDBOX_EXEC, "-p", profile])
    with _one_view():
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
    scratch_s, workdir_s = _real(scratch), str(workdir)
    protected = protected_paths(home)
    roots = writable_roots(policy, root, home)
    inside = [p for p in protected if any(_inside(p, r) for r in roots)]
    hidden = _real(paths.holon_home())
    keep = kept_in_holon_home(home, hidden, [_real(root), scratch_s, *roots])
    cover = os.path.isdir(hidden)
    masked = [
        k
        for k in secret_files(home)
        if os.path.isfile(k) and not (cover and _inside(k, hidden) and not _under_any(k, keep))
    ]
    creds = credential_dirs(hidden)
    siblings = sibling_covers(home)
    others = other_homes(home, hidden)
    use_ns = bool(inside or masked or cover or creds or siblings or others) and mountns.available()
    if use_ns and os.getuid() == 0:
        masked += block_devices()
    # without a mount namespace nothing is hidden, but every other agent's place in $HOLON_HOME
    # stays out of the write grants: granted entry by entry around it, like `.holon/`
    protected = sorted({*protected, *others})
    fenced = [*protected, hidden] if cover else protected
    ruleset = _ruleset(abi, policy, roots, scratch_s, use_ns, protected, fenced, keep)
    fd = ruleset.fd
    # writable places beneath a protected one, bound first: a read-only remount above them
    # leaves them writable (the scratch in `.holon/`; a private child's home in its parent's)
    home_s = _real(home.root)
    binds = [w for w in (scratch_s, home_s) if w in roots or w == scratch_s]
    binds = [w for w in binds if any(_inside(w, p) and w != p for p in inside)]

    covers = [(c, [own]) for c, own in siblings] + ([(hidden, keep)] if cover else [])
    covers += [(p, []) for p in [*creds, *others]]
    try:
        ns = mountns.plan(binds, inside, masked, covers) if use_ns else None
    except OSError as exc:  # a protected path removed since it was listed
        ruleset.close()
        raise SandboxUnavailable(
            f"could not build the sandbox: {exc}", hint="run `holon sandbox show AGENT`"
        ) from None

    def preexec() -> None:
        if ns is not None:
            mountns.apply(ns)
            os.chdir(workdir_s)
        landlock.restrict(fd)
        caps.drop()

    enforcement = "landlock+mountns" if use_ns else "landlock"
    return Confinement(policy, env, enforcement, preexec=preexec, ruleset=ruleset)


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
            for path in around(r, protected if _under_any(r, keep) else fenced):
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
    out["protected"] = protected_paths(home)
    hides = out["enforcement"] in ("landlock+mountns", "seatbelt")
    hidden = _real(paths.holon_home())  # save the agent's own places in it
    out["hidden"] = [hidden, *credential_dirs(hidden), *other_homes(home, hidden)] if hides else []
    out["scratch"] = str(home.scratch)
    out["temp_dirs"] = [d for d in TEMP_DIRS if os.path.isdir(d)] or [tempfile.gettempdir()]
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
    protected = protected_paths(home)
    roots = writable_roots(policy, execution_root, home)
    own, own_dot = _real(home.root), _real(home.dot)
    for target in targets:
        real = os.path.join(_real(target.parent), target.name)
        mine = _inside(real, own) and not _inside(real, own_dot)  # a child's home: in a parent's
        if not mine and any(_inside(real, p) for p in protected):
            return str(target), "it is the runtime's own state, read-only to the agent's tools"
        if policy.mode == "read-only":
            return str(target), "the read-only sandbox allows no file changes"
        if not any(_inside(real, r) for r in roots):
            return str(target), f"it is outside the writable roots of the {policy.mode} sandbox"
    return None

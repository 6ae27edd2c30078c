"""The places one command's sandbox decision names, on Linux and macOS alike: what it may write
(`writable_roots`: the execution root, a linked worktree's git directory the repository names
back, the agent home, the temporary directories), what no command may write (`protected_paths`)
or read (`secret_files`), what is hidden whole (`other_homes`, `credential_dirs`, siblings) and
what is kept of $HOLON_HOME (`kept_in_holon_home`).

Within one decision (`one_view`) each path is resolved once, from its resolved parent where its
last part is no symlink; the registered homes are resolved once per version of registry.json.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path

from holon import paths
from holon.home import registry
from holon.home.layout import DOT, Home
from holon.sandbox.policy import Policy

TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

_resolved: dict[str, str] | None = None  # realpath answers within one decision (`one_view`)
_registered: tuple[tuple | None, list[str]] = (None, [])  # registry.json's stat, its homes


def real(path: str | os.PathLike) -> str:
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
def one_view() -> Iterator[None]:
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


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected_paths(home: Home) -> list[str]:
    """What no command may write: the agent's `.holon/`, those of the agents above a private
    child, and holon's own files in $HOLON_HOME (config, keys, registry, logs), not the agent
    homes nor the managed worktrees kept there."""
    found = [real(agent.dot) for agent in lineage(home)]
    try:
        entries = list(os.scandir(paths.holon_home()))
    except OSError:
        entries = []
    kept = {real(paths.agents_dir()), real(paths.worktrees_dir())}
    root, base = real(home.root), real(paths.holon_home())
    for entry in entries:  # an entry that is no symlink resolves to itself in the resolved base
        path = real(entry.path) if entry.is_symlink() else os.path.join(base, entry.name)
        if path not in kept and not inside(root, path):
            found.append(path)
    return sorted(p for p in set(found) if os.path.lexists(p))


def secret_files(home: Home) -> list[str]:
    """Files no command may read: holon's provider keys and the keys that seal admitted messages
    (holon.agent.seal) of the agent and of the agents above a private child. In a mount
    namespace $HOLON_HOME is hidden whole and these are masked where still visible (seatbelt:
    denied); Landlock alone cannot."""
    keys = real(paths.holon_home() / "keys.json")
    return [keys, *(real(agent.admission_key) for agent in lineage(home))]


def sibling_covers(home: Home) -> list[tuple[str, str]]:
    """For each agent above a private child: its children directory and the one home in it on
    the way down to this agent. Covered so, the other children there (their queues and admission
    keys) are absent by name, however many there are or are made later."""
    pairs = pairwise(lineage(home))
    return [(real(above.children_dir), real(below.root)) for below, above in pairs]


def other_homes(home: Home, hidden: str) -> list[str]:
    """The `.holon/` of every registered agent outside $HOLON_HOME but those of this agent's
    lineage (`holon init PATH` puts a home anywhere, /tmp included): covered whole in the mount
    namespace, so their queues, ledgers and admission keys are absent by name, and kept out of
    the write grants without one. Agents inside $HOLON_HOME cost nothing here (hidden with it);
    one mount per agent registered elsewhere."""
    mine = {real(agent.root) for agent in lineage(home)}
    found = set()
    for root in registered_roots():
        dot = os.path.join(root, DOT)
        if not inside(root, hidden) and root not in mine and os.path.isdir(dot):
            found.add(dot)
    return sorted(found)


def credential_dirs(hidden: str) -> list[str]:
    """Other directories holding a provider's credentials, hidden whole like $HOLON_HOME: the
    Codex CLI's home when it holds an auth.json (it rewrites the file when it refreshes)."""
    auth = paths.codex_auth_file()
    if not auth.is_file():
        return []
    found = real(auth.parent)
    return [] if inside(found, hidden) or found == "/" else [found]


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
    gitdir = Path(real(root / text[len("gitdir: ") :].strip()))  # relative: to the worktree
    common = Path(real(gitdir / _head(gitdir / "commondir").strip()))
    back = _head(gitdir / "gitdir").strip()
    if not back or gitdir != common / "worktrees" / gitdir.name:
        return None
    if real(gitdir / back) != real(root / ".git"):
        return None
    return str(common)


def _head(path: Path) -> str:
    """The start of a small text file, "" when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return ""


def under_any(path: str, roots: list[str]) -> bool:
    return any(inside(path, r) for r in roots)


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
    mine = [real(paths.worktrees_dir() / home.agent_id), real(home.root)]
    bases = [*mine]
    for agent in lineage(home)[1:]:
        bases += [real(agent.root), real(paths.worktrees_dir() / agent.agent_id)]
    found = sorted(
        {
            w
            for w in [*wanted, *mine]
            if inside(w, hidden) and w != hidden and under_any(w, bases) and os.path.isdir(w)
        },
        key=len,
    )
    out: list[str] = []
    for w in found:
        if not under_any(w, out):
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
    roots = [real(execution_root), *TEMP_DIRS, *policy.writable_roots]
    if home is not None:
        roots.append(real(home.root))
    git_dir = linked_git_dir(execution_root)
    if git_dir:
        roots.append(git_dir)
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir:
        roots.append(tmpdir)
    return sorted({real(r) for r in roots if os.path.isdir(r)})


def around(root: str, protected: list[str]) -> list[str]:
    """Entries beneath `root` that contain no protected path, found by walking down towards each
    protected path: granting each of them grants `root` minus the protected paths (and minus new
    entries directly in the directories on the way). Symlinks are never granted."""
    out: list[str] = []
    inner = [p for p in protected if inside(p, root) and p != root]
    if not inner and not any(inside(root, p) for p in protected):
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
        if any(inside(path, p) for p in inner):
            continue  # protected itself, whatever lies beneath it
        if any(inside(p, path) for p in inner):
            if entry.is_dir(follow_symlinks=False):
                out += around(path, inner)
        else:
            out.append(path)
    return out

"""Managed git worktrees through the `git` command: create, inspect, remove when nothing is lost.

Every function runs real `git` through holon.gitrun (no hook, no program the repository
configures, no secret in its environment) and raises `WorktreeError` (a HolonError with a stable
kind: `not_a_git_repository`, `git_failed`, `git_unavailable`, `git_timeout`) instead of a
traceback. The info dict a worktree is known by is
`{path, branch, base_commit, original_branch}`; holon.agent.workspaces keeps it in workspace.json
and the child-agent delegation keeps it in task details.

Removal never loses work (`remove_if_clean`): a worktree with uncommitted changes is kept whole;
a clean one is removed, and its branch is deleted only when it has no commit beyond base_commit
that another branch does not hold; otherwise the branch is kept (`branch_retained`), so the
commits stay reachable after the directory is gone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from holon import gitrun
from holon.errors import HolonError


class WorktreeError(HolonError):
    kind = "git_failed"


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run `git -C cwd args...`; output as text. `git_failed` names the command and git's words."""
    try:
        proc = gitrun.run(cwd, *args)
    except gitrun.GitError as exc:
        raise WorktreeError(exc.message, kind=exc.kind, hint=exc.hint) from None
    if check and proc.returncode != 0:
        words = (proc.stderr or proc.stdout).strip().splitlines()
        raise WorktreeError(
            f"git {' '.join(args)} failed in {cwd}: {words[-1] if words else proc.returncode}",
            hint="check the repository with `git status` there",
        )
    return proc


def toplevel(path: Path) -> Path | None:
    """The top level of the working tree holding `path`, or None outside git."""
    if not path.is_dir():
        return None
    proc = git(path, "rev-parse", "--show-toplevel", check=False)
    out = proc.stdout.strip()
    return Path(out) if proc.returncode == 0 and out else None


def main_worktree(path: Path) -> Path | None:
    """The main worktree of the repository holding `path` (a linked worktree leads to its main
    one), or None outside git or for a bare repository."""
    top = toplevel(path)
    if top is None:
        return None
    common = git(top, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    main = Path(common).parent if Path(common).name == ".git" else None
    return Path(os.path.realpath(main)) if main is not None else Path(os.path.realpath(top))


def _require_repo(repo_anchor: Path) -> Path:
    top = toplevel(repo_anchor)
    if top is None:
        raise WorktreeError(
            f"{repo_anchor} is not inside a git repository",
            kind="not_a_git_repository",
            hint="isolated mode needs a git repository; use mode direct, or `git init` it",
        )
    return top


def _branch_exists(repo: Path, branch: str) -> bool:
    ref = f"refs/heads/{branch}"
    return git(repo, "show-ref", "--verify", "--quiet", ref, check=False).returncode == 0


def unique_branch(repo_anchor: Path, branch: str) -> str:
    """`branch`, or `branch-2`, `branch-3`... the first no branch of the repository has."""
    repo = _require_repo(repo_anchor)
    name, n = branch, 1
    while _branch_exists(repo, name):
        n += 1
        name = f"{branch}-{n}"
    return name


def plan(repo_anchor: Path, dest: Path, branch: str) -> dict[str, Any]:
    """What `create` will make, decided before anything changes (recorded first, for recovery)."""
    repo = _require_repo(repo_anchor)
    base = git(repo, "rev-parse", "HEAD").stdout.strip()
    head = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
    return {
        "path": os.fspath(dest),
        "branch": unique_branch(repo, branch),
        "base_commit": base,
        "original_branch": head or None,
    }


def add(repo_anchor: Path, info: dict[str, Any]) -> None:
    """`git worktree add -b <branch> <path> <base_commit>` for a planned info."""
    repo = _require_repo(repo_anchor)
    dest = Path(info["path"])
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    git(repo, "worktree", "add", "-b", info["branch"], os.fspath(dest), info["base_commit"])


def create(repo_anchor: Path, dest: Path, branch: str) -> dict[str, Any]:
    """A new worktree at `dest` on a new branch (`branch`, suffixed when taken) from HEAD:
    {path, branch, base_commit, original_branch}."""
    info = plan(repo_anchor, dest, branch)
    add(repo_anchor, info)
    return info


def linked_elsewhere(path: Path) -> Path | None:
    """The directory git's record of the linked worktree at `path` names when that is not `path`
    (the original of a copied worktree, sharing its HEAD and index), else None. Reads git's two
    link files; runs nothing and changes nothing."""
    try:
        text = (path / ".git").read_text(errors="replace").strip()
        if not text.startswith("gitdir: "):
            return None
        entry = Path(text[len("gitdir: ") :])
        named = Path((entry / "gitdir").read_text(errors="replace").strip()).parent
    except OSError:
        return None
    return None if os.path.realpath(named) == os.path.realpath(path) else named


def changed_files(path: Path) -> list[str]:
    """Uncommitted changes of a worktree (`git status --porcelain`): paths, untracked included."""
    out = git(path, "status", "--porcelain", "--untracked-files=all").stdout
    return [line[3:] for line in out.splitlines() if len(line) > 3]


def _registered(repo: Path, path: Path) -> bool:
    out = git(repo, "worktree", "list", "--porcelain").stdout
    real = os.path.realpath(path)
    return any(
        os.path.realpath(line[len("worktree ") :]) == real
        for line in out.splitlines()
        if line.startswith("worktree ")
    )


def _ahead(repo: Path, base: str, branch: str) -> int:
    proc = git(repo, "rev-list", "--count", f"{base}..refs/heads/{branch}", check=False)
    return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else 0


def _unmerged(repo: Path, base: str, branch: str) -> int:
    """Commits of `branch` beyond `base` that no other local branch holds."""
    others = [
        ref
        for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").stdout.split()
        if ref != f"refs/heads/{branch}"
    ]
    args = ["rev-list", "--count", f"refs/heads/{branch}", f"^{base}"]
    args += [f"^{ref}" for ref in others]
    proc = git(repo, *args, check=False)
    return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else 0


def status(repo_anchor: Path, info: dict[str, Any]) -> dict[str, Any]:
    """{exists, registered, branch, branch_matches, changed_files, commits_ahead}."""
    repo = _require_repo(repo_anchor)
    path = Path(info["path"])
    exists = path.is_dir() and toplevel(path) is not None
    current = None
    changed: list[str] = []
    if exists:
        current = git(path, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        current = current.stdout.strip() or None
        changed = changed_files(path)
    branch = info.get("branch")
    has_branch = bool(branch) and _branch_exists(repo, branch)
    return {
        "path": os.fspath(path),
        "exists": exists,
        "registered": _registered(repo, path),
        "branch": current,
        "branch_matches": exists and current == branch,
        "changed_files": changed,
        "commits_ahead": _ahead(repo, info["base_commit"], branch) if has_branch else 0,
    }


def remove_if_clean(repo_anchor: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Remove the worktree when nothing uncommitted remains and it is on its own branch; delete
    the branch too when none of its commits would be lost. {removed, retained_reason,
    changed_files, branch_deleted}."""
    repo = _require_repo(repo_anchor)
    st = status(repo, info)
    out: dict[str, Any] = {
        "removed": False,
        "retained_reason": None,
        "changed_files": st["changed_files"],
        "branch_deleted": False,
    }
    if st["exists"] and st["changed_files"]:
        out["retained_reason"] = "uncommitted_changes"
        return out
    if st["exists"] and not st["branch_matches"]:
        out["retained_reason"] = "branch_mismatch"  # someone switched it: not ours to judge
        return out
    if st["registered"]:
        git(repo, "worktree", "remove", os.fspath(info["path"]))
    git(repo, "worktree", "prune")
    out["removed"] = True
    branch = info.get("branch")
    if branch and _branch_exists(repo, branch):
        if _unmerged(repo, info["base_commit"], branch):
            out["retained_reason"] = "branch_retained"  # its commits live on in the branch
        else:
            git(repo, "branch", "-D", branch)
            out["branch_deleted"] = True
    return out


def roll_back(repo_anchor: Path, info: dict[str, Any]) -> None:
    """Undo a `create` a crash interrupted (the worktree was never used): the half-made directory,
    its registration and its branch while the branch still points at base_commit."""
    repo = _require_repo(repo_anchor)
    path = Path(info["path"])
    if _registered(repo, path):
        git(repo, "worktree", "remove", "--force", os.fspath(path), check=False)
    if path.is_dir() and not _registered(repo, path):
        shutil.rmtree(path, ignore_errors=True)
    git(repo, "worktree", "prune")
    branch = info.get("branch")
    if branch and _branch_exists(repo, branch):
        tip = git(repo, "rev-parse", f"refs/heads/{branch}").stdout.strip()
        if tip == info.get("base_commit"):
            git(repo, "branch", "-D", branch, check=False)

"""A linked worktree's common git directory is writable to its commands only when the repository
names the worktree back: a `.git` file the agent writes itself makes nothing else writable."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from gitrepo import git
from sandbox_marks import needs_landlock

from holon.sandbox import places
from holon.sandbox.policy import Policy


def _forged(root: Path, tmp_path: Path, common: str) -> None:
    """A `.git` naming a directory of the agent's own, whose commondir is `common`."""
    fake = tmp_path / "fake" / "wt"
    fake.mkdir(parents=True)
    (fake / "commondir").write_text(common + "\n")
    (fake / "gitdir").write_text(f"{root / '.git'}\n")
    (root / ".git").write_text(f"gitdir: {fake}\n")


def test_a_real_linked_worktree_writes_its_common_git_dir(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert places.linked_git_dir(tmp_path / "wt") == os.path.realpath(repo / ".git")
    assert places.linked_git_dir(repo) is None  # a plain repository: .git is a directory


def test_a_git_file_of_the_agents_own_makes_nothing_else_writable(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _forged(ws, tmp_path, "/")
    assert places.linked_git_dir(ws) is None
    assert "/" not in places.writable_roots(Policy(), ws)
    # another repository's worktree, named by a .git file it does not name back
    repo, other = tmp_path / "repo", tmp_path / "other"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "worktree", "add", "-q", str(other))
    (ws / ".git").write_text((other / ".git").read_text())
    assert places.linked_git_dir(ws) is None


@needs_landlock
def test_a_forged_git_file_gives_the_next_command_no_write_outside(home, sh, tmp_path):
    # a directory outside every writable root (the home and the temporary directories): not the
    # checkout, which a CI clone may keep under /tmp
    outside = Path(tempfile.mkdtemp(dir=Path.home(), prefix="holon-gitdir-probe-"))
    try:
        _forged(home, tmp_path, str(outside))
        code, _, _ = sh(home, f"touch {outside}/planted")
        assert code != 0 and not (outside / "planted").exists()
    finally:
        shutil.rmtree(outside)

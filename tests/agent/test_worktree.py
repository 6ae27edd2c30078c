"""holon.agent.worktree: real git worktrees made, inspected and removed only when nothing is
lost."""

from __future__ import annotations

import pytest
from gitrepo import git, make_repo

from holon.agent import worktree
from holon.errors import HolonError


def test_create_makes_a_worktree_on_a_unique_branch(tmp_path):
    repo = make_repo(tmp_path / "repo")
    info = worktree.create(repo, tmp_path / "wt", "holon/a/x")
    assert info["branch"] == "holon/a/x" and info["original_branch"] == "main"
    assert info["base_commit"] == git(repo, "rev-parse", "HEAD")
    assert (tmp_path / "wt" / "a.txt").read_text() == "a\n"
    again = worktree.create(repo, tmp_path / "wt2", "holon/a/x")
    assert again["branch"] == "holon/a/x-2"
    st = worktree.status(repo, info)
    assert st["exists"] and st["registered"] and st["branch_matches"]
    assert st["changed_files"] == [] and st["commits_ahead"] == 0


def test_a_directory_outside_git_is_refused(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(HolonError) as exc:
        worktree.create(plain, tmp_path / "wt", "b")
    assert exc.value.kind == "not_a_git_repository"


def test_main_worktree_of_a_linked_worktree_is_the_main_checkout(tmp_path):
    repo = make_repo(tmp_path / "repo")
    worktree.create(repo, tmp_path / "wt", "b")
    (tmp_path / "wt" / "sub").mkdir()
    assert worktree.main_worktree(tmp_path / "wt" / "sub") == repo.resolve()
    assert worktree.toplevel(tmp_path / "wt" / "sub") == (tmp_path / "wt").resolve()
    assert worktree.main_worktree(tmp_path) is None


def test_clean_worktree_and_its_branch_are_removed(tmp_path):
    repo = make_repo(tmp_path / "repo")
    info = worktree.create(repo, tmp_path / "wt", "b")
    out = worktree.remove_if_clean(repo, info)
    assert out == {
        "removed": True,
        "retained_reason": None,
        "changed_files": [],
        "branch_deleted": True,
    }
    assert not (tmp_path / "wt").exists()
    assert git(repo, "branch", "--list", "b") == ""


def test_uncommitted_work_keeps_the_whole_worktree(tmp_path):
    repo = make_repo(tmp_path / "repo")
    info = worktree.create(repo, tmp_path / "wt", "b")
    (tmp_path / "wt" / "a.txt").write_text("changed\n")
    (tmp_path / "wt" / "new.txt").write_text("n\n")
    assert sorted(worktree.changed_files(tmp_path / "wt")) == ["a.txt", "new.txt"]
    out = worktree.remove_if_clean(repo, info)
    assert out["removed"] is False and out["retained_reason"] == "uncommitted_changes"
    assert sorted(out["changed_files"]) == ["a.txt", "new.txt"]
    assert (tmp_path / "wt" / "new.txt").exists()


def test_committed_work_keeps_the_branch_when_the_worktree_goes(tmp_path):
    repo = make_repo(tmp_path / "repo")
    info = worktree.create(repo, tmp_path / "wt", "b")
    (tmp_path / "wt" / "a.txt").write_text("committed\n")
    git(tmp_path / "wt", "commit", "-q", "-am", "work")
    assert worktree.status(repo, info)["commits_ahead"] == 1
    out = worktree.remove_if_clean(repo, info)
    assert out["removed"] is True and out["retained_reason"] == "branch_retained"
    assert not (tmp_path / "wt").exists()
    assert git(repo, "show", "b:a.txt") == "committed"  # the commit is still reachable


def test_roll_back_undoes_a_half_made_worktree(tmp_path):
    repo = make_repo(tmp_path / "repo")
    info = worktree.plan(repo, tmp_path / "wt", "b")
    worktree.add(repo, info)
    worktree.roll_back(repo, info)
    assert not (tmp_path / "wt").exists()
    assert git(repo, "branch", "--list", "b") == ""
    assert str(tmp_path / "wt") not in git(repo, "worktree", "list")

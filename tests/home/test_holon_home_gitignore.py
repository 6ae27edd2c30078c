"""`holon init` writes $HOLON_HOME/.gitignore: a HOLON_HOME kept in git never offers its keys,
logs, locks or indexes to `git add -A`; an operator's own .gitignore is kept."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from helpers import run

from holon.home.init import HOLON_HOME_GITIGNORE, ignore_secrets


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_add_all_leaves_keys_logs_locks_and_indexes_out(holon_env):
    assert run("init", "--agent-id", "a").returncode == 0
    assert run("keys", "set", "OPENAI_API_KEY", "-", input="sk-secret").returncode == 0
    assert run("tick", "--all", "--log").returncode == 0
    (holon_env / "logs").mkdir(exist_ok=True)
    (holon_env / "logs" / "tick.log").write_text("x\n")
    git = ["git", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=holon_env, check=True)
    subprocess.run([*git, "add", "-A"], cwd=holon_env, check=True)
    staged = subprocess.run(
        [*git, "diff", "--cached", "--name-only"], cwd=holon_env, capture_output=True, text=True
    ).stdout.splitlines()
    assert ".gitignore" in staged and "registry.json" in staged
    assert not [p for p in staged if p.startswith(("keys.json", "logs/", "due/"))], staged
    assert not [p for p in staged if p.endswith(".lock")], staged


def test_an_existing_gitignore_is_kept(tmp_path):
    (tmp_path / ".gitignore").write_text("mine\n")
    assert ignore_secrets(tmp_path) is False
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    other = tmp_path / "other"
    other.mkdir()
    assert ignore_secrets(other) is True
    assert (other / ".gitignore").read_text() == HOLON_HOME_GITIGNORE

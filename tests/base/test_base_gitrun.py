"""holon.gitrun: git runs nothing a repository plants (hooks, hooks path, fsmonitor, filters from
the config, an include or a conditional include, textconv, an ssh command) and gets no secret."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gitplant import plant, prepare, ran, raw_git
from gitrepo import make_repo

from holon import gitrun

EVERYTHING = {"fsmonitor", "evil-clean", "inc-clean", "pre-commit", "post-commit", "textconv"}


def operations(repo: Path, git) -> None:
    """What holon does with a repository, and what makes the planted programs run."""
    git(repo, "status", "--porcelain", "--untracked-files=all")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")
    git(repo, "log", "-p", "-1", check=False)  # holon fails closed: an empty textconv
    git(repo, "worktree", "add", "-q", "-b", "side", str(repo.parent / "side"), "HEAD")
    git(repo.parent / "side", "status", "--porcelain")
    git(repo, "worktree", "remove", str(repo.parent / "side"))
    git(repo, "ls-remote", "ssh://example.invalid/x.git", check=False)


def committed_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    prepare(repo)
    raw_git(repo, "add", "-A")
    raw_git(repo, "commit", "-q", "-m", "attributes")
    return repo


def holon_git(cwd: Path, *args: str, check: bool = True):
    proc = gitrun.run(cwd, *args, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"})
    assert proc.returncode == 0 or not check, proc.stderr
    return proc


def test_what_is_planted_runs_under_plain_git(tmp_path):
    """The plants are real: git as a person runs it starts every one of them."""
    repo = committed_repo(tmp_path)
    plant(repo, tmp_path / "marks")
    operations(repo, raw_git)
    fired = set(ran(tmp_path / "marks"))
    assert EVERYTHING | {"post-checkout", "evil-smudge", "cond-smudge", "ssh"} <= fired


@pytest.mark.parametrize("hooks_path", [False, True])
def test_nothing_planted_runs_and_the_operations_succeed(tmp_path, hooks_path):
    repo = committed_repo(tmp_path)
    plant(repo, tmp_path / "marks", hooks_path=hooks_path)
    operations(repo, holon_git)
    assert ran(tmp_path / "marks") == []
    assert raw_git(repo, "show", "HEAD:a.txt").stdout == "a.txt changed\n"  # no filter applied
    assert not (tmp_path / "side").exists()


def test_a_key_named_by_the_repository_gets_a_neutral_value():
    keys = ["filter.X.clean", "filter.X.required", "diff.y.textconv", "merge.z.driver"]
    keys += ["credential.https://h.helper", "hook.lint.command", "pager.log", "user.name"]
    assert dict(gitrun.neutralised(keys)) == {
        "filter.X.clean": "",
        "filter.X.required": "false",
        "diff.y.textconv": "",
        "merge.z.driver": "",
        "credential.https://h.helper": "",
        "hook.lint.command": "",
        "hook.lint.enabled": "false",
        "pager.log": "false",
    }


def test_git_gets_no_secret_and_no_prompt(holon_env, tmp_path, monkeypatch):
    """The environment git really runs with (a `git` first on PATH that prints it)."""
    holon_env.mkdir(exist_ok=True)
    (holon_env / "keys.json").write_text(json.dumps({"keys": {"STORED_NAME": "stored-value"}}))
    (holon_env / "config.toml").write_text('[providers.p]\napi_key_env = "ODDLY_NAMED"\n')
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\n[ "$1" = --no-pager ] && env\nexit 0\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    secrets = {"OPENAI_API_KEY": "sk-1", "GH_TOKEN": "t", "ODDLY_NAMED": "o", "STORED_NAME": "s"}
    for key, value in {**secrets, "GIT_DIR": "/elsewhere", "KEEP_ME": "yes"}.items():
        monkeypatch.setenv(key, value)
    lines = gitrun.run(tmp_path, "status").stdout.splitlines()
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    assert env["KEEP_ME"] == "yes" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert not set(secrets) & set(env) and "GIT_DIR" not in env
    assert env["GIT_EDITOR"] == ":" and env["GIT_PAGER"] == "cat"


def test_a_git_that_does_not_finish_is_stopped(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\ncase "$*" in *" status") exec sleep 60;; esac\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(gitrun.GitError) as err:
        gitrun.run(tmp_path, "status", timeout=0.5)
    assert err.value.kind == "git_timeout" and "git status" in err.value.message

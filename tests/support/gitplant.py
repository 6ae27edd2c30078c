"""What an agent's command could plant in a repository to run code as the operator the next time
holon runs git there: hook files, a hooks path, fsmonitor, filters (also from an include and a
conditional include), textconv, an ssh command. Each planted program leaves `marks/<name>`."""

from __future__ import annotations

import subprocess
from pathlib import Path

HOOKS = (
    "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
    "reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite",
)  # fmt: skip
ATTRIBUTES = "a.txt filter=evil diff=evil\nb.txt filter=inc\nc.txt filter=cond\n"


def raw_git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """git as a person would run it: the repository's hooks and configuration apply."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=env,
        check=check,
        stdin=subprocess.DEVNULL,
    )


def _program(where: Path, name: str, marks: Path) -> str:
    """A program that leaves its mark; a filter passes its input through, textconv its file."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    passes = "cat" if "-clean" in name or "-smudge" in name else ""
    if name == "textconv":
        passes = 'cat "$1"'
    path.write_text(f'#!/bin/sh\ntouch "{marks / name}"\n{passes}\n')
    path.chmod(0o755)
    return str(path)


def prepare(repo: Path) -> None:
    """The tracked part (what a commit could carry): .gitattributes naming the filters, the
    files they apply to."""
    (repo / ".gitattributes").write_text(ATTRIBUTES)
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text(f"{name}\n")


def plant(repo: Path, marks: Path, *, hooks_path: bool = False) -> None:
    """The untracked part, written into the repository's git directory and beside it."""
    marks.mkdir(parents=True, exist_ok=True)
    gitdir = Path(raw_git(repo, "rev-parse", "--git-common-dir").stdout.strip())
    gitdir = gitdir if gitdir.is_absolute() else repo / gitdir
    planted = marks.parent / f"planted-{marks.name}"
    hooks = planted / "hooks" if hooks_path else gitdir / "hooks"
    for name in HOOKS:
        _program(hooks, name, marks)
    inc, cond = planted / "inc.config", planted / "cond.config"
    inc.write_text(
        f'[filter "inc"]\n\tclean = {_program(planted, "inc-clean", marks)}\n'
        f"\tsmudge = {_program(planted, 'inc-smudge', marks)}\n\trequired = true\n"
    )
    cond.write_text(
        f'[filter "cond"]\n\tclean = {_program(planted, "cond-clean", marks)}\n'
        f"\tsmudge = {_program(planted, 'cond-smudge', marks)}\n\trequired = true\n"
    )
    config = {
        "core.fsmonitor": _program(planted, "fsmonitor", marks),
        "core.sshCommand": _program(planted, "ssh", marks),
        "filter.evil.clean": _program(planted, "evil-clean", marks),
        "filter.evil.smudge": _program(planted, "evil-smudge", marks),
        "filter.evil.required": "true",
        "diff.evil.textconv": _program(planted, "textconv", marks),
        "include.path": str(inc),
        "includeIf.gitdir:**/worktrees/**.path": str(cond),
    }
    if hooks_path:
        config["core.hooksPath"] = str(hooks)
    for key, value in config.items():
        raw_git(repo, "config", key, value)
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text(f"{name} changed\n")  # the clean filters run on staging it


def ran(marks: Path) -> list[str]:
    """The planted programs that ran."""
    return sorted(p.name for p in marks.iterdir()) if marks.is_dir() else []

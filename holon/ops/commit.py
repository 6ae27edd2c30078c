"""Commit an agent home to git after its turns settled (opt-in: `holon tick --commit`).

Only a home that is the top of its own git work tree is committed: a home inside a larger
repository is left alone, because holon does not write into someone else's history (run
`git init` in the home to use this). Everything git does not ignore is staged — AGENTS.md,
memory/, notes/, work/, skills/, work-items/, the ledgers, agent.json and settings.json; the
runtime files are ignored by `.holon/.gitignore` — and files that are tracked but ignored (the
run state and queue of a home older than format 2) are removed from the index, never from
disk. One commit per call: its subject is the first line of the last turn's final text, its
body names every turn and its message. Author and committer come from git's configuration,
else `holon <agent_id@localhost>`.

A failure never fails the tick: it is returned as one line (and recorded as a
`home_commit_failed` event). Nothing changed, no settled turn, a detached HEAD (an older
commit checked out) or a busy agent: no commit, no warning.
"""

from __future__ import annotations

import os
from typing import Any

from holon import gitrun
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home.layout import Home
from holon.store.locks import FileLock, LockBusy

SUBJECT_CHARS = 72


class GitFailed(Exception):
    """A git command failed; the message is one line for the operator."""


def commit_turns(home: Home, turns: list[dict[str, Any]]) -> str | None:
    """Commit the home after `turns` (TickReport.to_dict()["turns"]); a warning line or None."""
    return commit(home, turns)["warning"]


def commit(home: Home, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """{"commit": new commit id or None, "untracked": paths removed from the index, "warning"}."""
    out: dict[str, Any] = {"commit": None, "untracked": [], "warning": None}
    settled = [t for t in turns if t.get("turn_id") and t.get("status") in ("completed", "failed")]
    if not settled or not _own_repository(home):
        return out
    lock = FileLock(home.turn_lock)  # the home does not change while it is committed
    try:
        lock.acquire(blocking=False)
    except (LockBusy, FileNotFoundError):
        return out  # a tick is running: its own commit will include these changes
    try:
        Agent(home).ensure()  # a home older than format 2 gets its .gitignore before staging
        out.update(_commit(home, settled))
    except (GitFailed, HolonError) as exc:
        out["warning"] = f"{home.agent_id}: the home was not committed: {exc}"
    except OSError as exc:
        out["warning"] = f"{home.agent_id}: the home was not committed: {exc.strerror or exc}"
    finally:
        lock.release()
    if out["warning"]:
        try:
            Agent(home).event("home_commit_failed", warning=out["warning"])
        except Exception:  # noqa: BLE001 — reporting a failure must not fail the tick
            pass
    return out


def _own_repository(home: Home) -> bool:
    """Is the home the top of a git work tree? (cheap: a `.git` entry, then git agrees)."""
    if not os.path.lexists(home.root / ".git"):
        return False
    try:
        top = (_git(home, "rev-parse", "--show-toplevel") or "").strip()
    except (GitFailed, OSError):
        return False
    return os.path.realpath(top) == os.path.realpath(home.root)


def _commit(home: Home, turns: list[dict[str, Any]]) -> dict[str, Any]:
    if _git(home, "symbolic-ref", "-q", "HEAD", check=False) is None:
        return {}  # detached HEAD: someone is looking at an older commit; do not add to it
    listed = _git(home, "ls-files", "-z", "--cached", "--ignored", "--exclude-standard") or ""
    stale = [p for p in listed.split("\0") if p]
    if stale:  # tracked before they were ignored: out of the index, kept on disk
        args = ("rm", "-q", "--cached", "--pathspec-from-file=-", "--pathspec-file-nul")
        _git(home, *args, input="\0".join(stale))
    _git(home, "add", "-A", "--", ".")
    quiet = ("diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv")
    if _git(home, *quiet, check=False) is not None:
        return {"untracked": stale}  # nothing to commit
    _git(home, *_identity(home), "commit", "-q", "-F", "-", input=message(home, turns))
    return {"commit": (_git(home, "rev-parse", "HEAD") or "").strip(), "untracked": stale}


def _identity(home: Home) -> list[str]:
    """`-c` options for what git's configuration lacks (then the commit is `holon`'s)."""
    out = []
    for key, fallback in (("user.name", "holon"), ("user.email", f"{home.agent_id}@localhost")):
        if not (_git(home, "config", "--get", key, check=False) or "").strip():
            out += ["-c", f"{key}={fallback}"]
    return out


def message(home: Home, turns: list[dict[str, Any]]) -> str:
    """Subject: the first line of the last turn's final text (or what happened), at most 72
    characters. Body: one paragraph per turn with its id, message id and status."""
    last = turns[-1]
    subject = _first_line(last.get("final_text") or "")
    if not subject:
        failure = (last.get("failure_artifact") or {}).get("summary") or ""
        subject = _first_line(f"turn failed: {failure}" if failure else f"turn {last['status']}")
    if len(turns) > 1:
        subject = _bounded(f"{subject} (+{len(turns) - 1} more turns)", SUBJECT_CHARS)
    body = [
        f"turn {t['turn_id']}: {t.get('status')}\nmessage {t.get('message_id')}"
        + (f"\n{_first_line(t.get('final_text') or '')}" if len(turns) > 1 else "")
        for t in turns
    ]
    return "\n\n".join([subject, *body, f"agent {home.agent_id}"]) + "\n"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return _bounded(" ".join(line.split()), SUBJECT_CHARS)
    return ""


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _git(home: Home, *args: str, input: str | None = None, check: bool = True) -> str | None:
    """Run git in the home (holon.gitrun: no hook, no program the repository configures, no
    secret); its stdout, or None when it exits non-zero and `check` is off."""
    try:
        proc = gitrun.run(home.root, *args, input=input, env={"GIT_LITERAL_PATHSPECS": "1"})
    except gitrun.GitError as exc:
        raise GitFailed(exc.message) from None
    if proc.returncode == 0:
        return proc.stdout
    if not check:
        return None
    why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    sub = next((a for a in args if not a.startswith("-") and "=" not in a), "")
    raise GitFailed(f"`git {sub}` failed: {why}")

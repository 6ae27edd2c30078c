"""An agent home kept in git, through the real entry point: a turn appends to tracked ledgers
and nothing else, idle ticks touch nothing tracked, a clone runs its own prompts and never the
original's, a restored older commit brings back no task, a corrupt run state is set aside, and
`holon.ops.commit` writes the agent's history."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from helpers import run, subprocess_env, transcript, wait_for, write_script

from holon.home.layout import Home
from holon.ops import commit

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(autouse=True)
def no_git_config(monkeypatch):
    """No global or system git identity: what commit_turns falls back to is visible."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=Operator", "-c", "user.email=op@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def porcelain(home: Path) -> list[str]:
    return git(home, "status", "--porcelain", "--untracked-files=all").splitlines()


def holon(*args: str, model: str | None = None, holon_home: Path | None = None, code: int = 0):
    extra = {"HOLON_MODEL": model} if model else {}
    if holon_home is not None:
        extra["HOLON_HOME"] = str(holon_home)
    r = run(*args, env=subprocess_env(**extra))
    assert r.returncode == code, f"holon {' '.join(args)} -> {r.returncode}\n{r.stdout}{r.stderr}"
    return json.loads(r.stdout) if "--json" in args else r.stdout


def git_home(holon_env: Path) -> Path:
    """`holon init`, then `git init` and a first commit of what the home tracks."""
    holon("init", "--agent-id", "a")
    home = holon_env / "agents" / "a"
    git(home, "init", "-q", "-b", "main")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "init")
    return home


def settle(home: Path, turns: list[dict]) -> str:
    """Commit the home after `turns` with holon.ops.commit; the new commit id."""
    out = commit.commit(Home(home), turns)
    assert out["warning"] is None and out["commit"], out
    assert porcelain(home) == []
    return out["commit"]


JOB = {
    "tool_calls": [
        {
            "name": "ExecCommand",
            "arguments": {"cmd": "sleep 1; echo finished", "login": False, "yield_time_ms": 100},
        }
    ]
}


def run_history(holon_env: Path, tmp_path: Path) -> dict:
    """Two committed turns: the first starts a background task (and the operator sets a timer),
    the second reads the task's result."""
    home = git_home(holon_env)
    model = write_script(
        tmp_path / "s.jsonl",
        [JOB, {"text": "Started the job.\nIt runs in the background."}, {"text": "Job done."}],
    )
    first = holon("prompt", "a", "start the job", "--json", model=model)
    holon("timer", "create", "a", "--after", "1h", "--text", "look again")
    task_id = next(e for e in transcript(home) if e["kind"] == "tool_result")["data"]["envelope"][
        "result"
    ]["task_handle"]["task_id"]
    assert porcelain(home) == [
        f"?? .holon/ledger/{name}.jsonl" for name in ("briefs", "events", "messages", "transcript")
    ]  # no run state, queue, task, timer or next_due
    c1 = settle(home, [first])
    task = home / ".holon" / "tasks" / task_id / "task.json"
    wait_for(lambda: json.loads(task.read_text()).get("result_message_id"), timeout=15)
    report = holon("tick", "a", "--json", model=model)
    [second] = report["agents"][0]["turns"]
    assert second["final_text"] == "Job done."
    return {"home": home, "model": model, "task_id": task_id, "c1": c1, "second": second}


def test_a_turn_appends_to_ledgers_and_idle_ticks_touch_nothing(holon_env, tmp_path):
    h = run_history(holon_env, tmp_path)
    home = h["home"]
    changed = porcelain(home)
    assert changed and all(re.fullmatch(r" M \.holon/ledger/[a-z_]+\.jsonl", c) for c in changed)
    for line in git(home, "diff", "--numstat").splitlines():
        added, deleted, path = line.split("\t")
        assert deleted == "0" and int(added) > 0, line  # appended lines only
    settle(home, [h["second"]])
    for _ in range(3):
        holon("tick", "a")
        holon("tick", "--all")
        holon("status", "a")
    holon("tick", "a", "--wait")  # skips the idle check: it runs, and writes nothing tracked
    assert porcelain(home) == []
    subjects = git(home, "log", "--format=%s").splitlines()
    assert subjects == ["Job done.", "Started the job.", "init"]
    tracked = git(home, "ls-files").splitlines()
    assert ".holon/settings.json" in tracked and ".holon/ledger/transcript.jsonl" in tracked
    for volatile in ("state.json", "queue/", "tasks/", "timers/", "locks/", "next_due"):
        assert not any(p.startswith(f".holon/{volatile}") for p in tracked), volatile


def test_a_clone_runs_its_own_prompts_and_none_of_the_originals(holon_env, tmp_path):
    h = run_history(holon_env, tmp_path)
    settle(h["home"], [h["second"]])
    other = tmp_path / "other-holon-home"
    clone = other / "agents" / "a"
    clone.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(h["home"]), str(clone))
    status = holon("status", "a", "--json", holon_home=other)
    assert status["status"] == "awake_idle" and status["tasks"]["active"] == 0
    assert status["queue"] == {
        "pending": 0,
        "in_progress": 0,
        "dead_letters": 0,
        "deferred": 0,
        "next_not_before": None,
    }
    assert status["timers"] == []  # timers are the original's schedule; the clone has none
    before = transcript(clone)
    model = write_script(tmp_path / "clone.jsonl", [{"text": "Hello from the clone."}])
    holon("prompt", "a", "who are you?", "--no-wait", model=model, holon_home=other)
    report = holon("tick", "--all", "--json", model=model, holon_home=other)
    [agent] = report["agents"]
    assert [t["final_text"] for t in agent["turns"]] == ["Hello from the clone."]
    new = transcript(clone)[len(before) :]
    assert [e["data"]["text"] for e in new if e["kind"] == "message"] == ["who are you?"]
    assert not any(e["kind"] == "tool_call" for e in new)  # the job was not run again
    again = holon("tick", "--all", "--json", model=model, holon_home=other)
    assert [a["outcome"] for a in again["agents"]] in ([], ["idle"])  # nothing due: none listed
    assert all(re.fullmatch(r" M \.holon/ledger/[a-z_]+\.jsonl", c) for c in porcelain(clone))


def test_an_older_commit_brings_back_no_running_task(holon_env, tmp_path):
    h = run_history(holon_env, tmp_path)
    home = h["home"]
    settle(home, [h["second"]])
    git(home, "checkout", "-q", h["c1"])  # the commit made while the task was running
    status = holon("status", "a", "--json")
    assert status["tasks"]["active"] == 0 and status["status"] == "awake_idle"
    assert status["queue"]["pending"] == 0
    report = holon("tick", "a", "--json", model=h["model"])
    assert report["agents"][0]["outcome"] == "idle"
    events = [json.loads(x) for x in (home / ".holon/ledger/events.jsonl").read_text().splitlines()]
    rebuilt = [e["data"]["reason"] for e in events if e["kind"] == "state_rebuilt"]
    assert rebuilt == ["ledger_rewound"]  # the run state pointed past the restored transcript
    assert not any(e["kind"] == "task_recovered" for e in events)
    assert commit.commit_turns(Home(home), [h["second"]]) is None  # detached: no commit
    assert git(home, "rev-parse", "HEAD").strip() == h["c1"]


def test_a_commit_that_tracked_a_running_task_does_not_resurrect_it(holon_env, tmp_path):
    """A home committed before its runtime files were ignored: the restored marker names a
    supervisor that is gone, so the next tick closes the task and status shows none."""
    home = git_home(holon_env)
    model = write_script(
        tmp_path / "s.jsonl",
        [JOB, {"text": "Started."}, {"text": "Done."}, {"text": "Noted: it was interrupted."}],
    )
    holon("prompt", "a", "start the job", model=model)
    git(home, "add", "-A", "-f", ".holon")  # as a home of format 1 would have tracked it
    git(home, "commit", "-q", "-m", "while the task runs")
    old = git(home, "rev-parse", "HEAD").strip()
    active = home / ".holon" / "tasks" / "active"
    wait_for(lambda: not any(active.iterdir()), timeout=15)
    holon("tick", "a", model=model)
    git(home, "checkout", "-q", "-f", old)
    assert len(list(active.iterdir())) == 1  # the marker is back, with a dead supervisor's pid
    report = holon("tick", "a", "--json", model=model)
    status = holon("status", "a", "--json")
    assert status["tasks"]["active"] == 0
    [task] = [json.loads(p.read_text()) for p in home.glob(".holon/tasks/task_*/task.json")]
    assert task["status"] != "running"
    assert report["agents"][0]["outcome"] in ("ran", "idle")


def test_a_corrupt_run_state_in_a_git_home_is_set_aside(holon_env):
    home = git_home(holon_env)
    (home / ".holon" / "state.json").write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> b\n")
    assert holon("status", "a", "--json")["status"] == "awake_idle"
    assert porcelain(home) == ["?? .holon/ledger/events.jsonl"]  # the state_rebuilt event only
    assert list((home / ".holon").glob("state.json.corrupt-*"))


def test_a_corrupt_settings_file_names_itself(holon_env):
    home = git_home(holon_env)
    (home / ".holon" / "settings.json").write_text("<<<<<<< HEAD\n")
    r = run("tick", "a", "--wait")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("holon: corrupt_state: ") and "settings.json" in r.stderr
    assert "\nhint: restore it from git" in r.stderr


# -- holon.ops.commit -------------------------------------------------------------------------


def test_commit_turns_writes_the_agents_history(holon_env, tmp_path):
    home = git_home(holon_env)
    model = write_script(
        tmp_path / "s.jsonl",
        [{"text": "First answer, which is long: " + "x" * 80}, {"text": "\n\nSecond answer."}],
    )
    first = holon("prompt", "a", "one", "--json", model=model)
    assert commit.commit_turns(Home(home), [first]) is None
    second = holon("prompt", "a", "two", "--json", model=model)
    assert commit.commit_turns(Home(home), [second]) is None
    log = git(home, "log", "--format=%an <%ae>|%s|%b%x00").split("\0")
    entries = [e.strip().split("|") for e in log if e.strip()]
    assert [s for _, s, _ in entries] == [
        "Second answer.",
        "First answer, which is long: " + "x" * 42 + "…",
        "init",
    ]
    assert [a for a, _, _ in entries[:2]] == ["holon <a@localhost>"] * 2
    body = entries[0][2]
    assert f"turn {second['turn_id']}: completed" in body
    assert f"message {second['message_id']}" in body and "agent a" in body
    assert porcelain(home) == []


def test_commit_turns_uses_the_configured_identity_and_skips_no_change(holon_env, tmp_path):
    home = git_home(holon_env)
    git(home, "config", "user.name", "Ops Team")
    git(home, "config", "user.email", "ops@example.com")
    model = write_script(tmp_path / "s.jsonl", [{"text": "ok"}])
    turn = holon("prompt", "a", "hi", "--json", model=model)
    assert commit.commit_turns(Home(home), [turn]) is None
    assert git(home, "log", "-1", "--format=%an <%ae>|%cn").strip() == (
        "Ops Team <ops@example.com>|Ops Team"
    )
    head = git(home, "rev-parse", "HEAD")
    assert commit.commit(Home(home), [turn]) == {"commit": None, "untracked": [], "warning": None}
    assert commit.commit_turns(Home(home), []) is None  # no settled turn: nothing to say
    assert git(home, "rev-parse", "HEAD") == head


def test_commit_turns_untracks_runtime_files_of_an_older_home(holon_env, tmp_path):
    """A home of format 1 in git tracked its run state (its .gitignore named only locks, queue/tmp
    and indexes): the next command upgrades it, the next commit drops those files from the index
    and keeps them on disk."""
    home = git_home(holon_env)
    dot = home / ".holon"
    ident = json.loads((dot / "agent.json").read_text())
    ident.update(home_format=1, migrations=["m001_initial_layout"])
    (dot / "agent.json").write_text(json.dumps(ident))
    (dot / ".gitignore").write_text("locks/\nqueue/tmp/\nindexes/\nmine.txt\n")
    (dot / "settings.json").unlink()
    git(home, "add", "-A", "-f", ".holon/state.json", ".holon")
    git(home, "commit", "-q", "-m", "format 1")
    model = write_script(tmp_path / "s.jsonl", [{"text": "ok"}])
    turn = holon("prompt", "a", "hi", "--json", model=model)
    out = commit.commit(Home(home), [turn])
    assert out["warning"] is None and out["untracked"] == [".holon/state.json"]
    tracked = git(home, "ls-files").splitlines()
    assert ".holon/state.json" not in tracked and (dot / "state.json").exists()
    assert ".holon/settings.json" in tracked
    assert (dot / ".gitignore").read_text().endswith("\nmine.txt\n")
    assert porcelain(home) == []


def test_commit_turns_reports_a_failure_and_never_raises(holon_env, tmp_path):
    home = git_home(holon_env)
    model = write_script(tmp_path / "s.jsonl", [{"text": "ok"}])
    turn = holon("prompt", "a", "hi", "--json", model=model)
    (home / ".git" / "index.lock").write_text("")  # another git holds the index
    warning = commit.commit_turns(Home(home), [turn])
    assert warning.startswith("a: the home was not committed: `git add` failed: ")
    events = [json.loads(x) for x in (home / ".holon/ledger/events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "home_commit_failed"
    assert events[-1]["data"] == {"warning": warning}


def test_commit_turns_commits_only_a_home_that_is_its_own_repository(holon_env, tmp_path):
    outer = holon_env  # $HOLON_HOME as a repository that holds the home
    holon("init", "--agent-id", "a")
    git(outer, "init", "-q", "-b", "main")
    model = write_script(tmp_path / "s.jsonl", [{"text": "ok"}])
    turn = holon("prompt", "a", "hi", "--json", model=model)
    assert commit.commit(Home(outer / "agents" / "a"), [turn])["commit"] is None
    assert git(outer, "rev-list", "--all") == ""  # nothing was committed to the outer repository
    plain = tmp_path / "plain"
    holon("init", str(plain), "--agent-id", "p")
    assert commit.commit_turns(Home(plain), [turn]) is None  # not a repository at all

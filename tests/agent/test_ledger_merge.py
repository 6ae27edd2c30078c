"""Two clones of an agent home in git each run a turn, then one pulls the other: the ledgers
union-merge without conflict markers, the merged events are renumbered at the next tick, and a
home whose ledgers a merge broke anyway is refused with `ledger_conflict` until doctor repairs
it, losing no record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import run, subprocess_env

from holon.agent import ledgermerge
from holon.home.layout import Home

LEDGERS = ("messages.jsonl", "transcript.jsonl", "events.jsonl", "briefs.jsonl")


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
    }
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def ok(env, *args):
    proc = run(*args, env=env)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def records(home: Path, name: str) -> list[dict]:
    path = home / ".holon" / "ledger" / name
    return (
        [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    )


def two_clones(tmp_path, script):
    a = tmp_path / "a"
    env_a = subprocess_env(HOLON_HOME=str(tmp_path / "ha"), HOLON_MODEL=script({"text": "one"}))
    ok(env_a, "init", "--agent-id", "x", str(a))
    git(a, "init", "-q", "-b", "main")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "home")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(a), str(b))
    env_b = subprocess_env(
        HOLON_HOME=str(tmp_path / "hb"), HOLON_MODEL=script({"text": "two"}, name="b.jsonl")
    )
    ok(env_a, "prompt", str(a), "on machine a")
    ok(env_b, "prompt", str(b), "on machine b")
    for home in (a, b):
        git(home, "add", "-A")
        git(home, "commit", "-qm", "turn")
    return a, b, env_a, env_b


def test_two_clones_merge_without_conflicts_and_the_next_tick_settles(tmp_path, script):
    a, b, env_a, _env_b = two_clones(tmp_path, script)
    assert (a / ".holon" / ".gitattributes").read_text().count("merge=union") == 1
    before = {n: records(a, n) + records(b, n) for n in LEDGERS}
    git(a, "pull", "-q", "--no-rebase", "--no-edit", str(b), "main")
    for name in LEDGERS:
        text = (a / ".holon" / "ledger" / name).read_text()
        assert "<<<<<<<" not in text and ">>>>>>>" not in text, name
        ids = [r["id"] for r in records(a, name)]
        assert len(ids) == len(set(ids)) and set(ids) == {r["id"] for r in before[name]}, name
    ok(env_a, "prompt", str(a), "after the merge", "--model", script({"text": "3"}, name="c.jsonl"))
    seqs = [r["event_seq"] for r in records(a, "events.jsonl")]
    assert seqs == list(range(1, len(seqs) + 1))
    assert any(r["kind"] == "ledger_merged" for r in records(a, "events.jsonl"))
    doctor = run("doctor", str(a), "--json", env=env_a)
    assert all(f["check"] != "ledgers" for f in json.loads(doctor.stdout)["agents"][0]["findings"])


def test_conflict_markers_stop_the_tick_and_doctor_repairs_them(tmp_path, script):
    a, b, env_a, _env_b = two_clones(tmp_path, script)
    (a / ".holon" / ".gitattributes").unlink()  # as a home older than the union driver
    git(a, "commit", "-qam", "no attributes")
    subprocess.run(["git", "-C", str(b), "rm", "-q", ".holon/.gitattributes"], check=True)
    git(b, "commit", "-qm", "no attributes")
    pulled = subprocess.run(
        ["git", "-C", str(a), "pull", "-q", "--no-rebase", "--no-edit", str(b), "main"],
        capture_output=True,
        env={
            **subprocess_env(),
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        },
    )
    assert pulled.returncode != 0  # a conflict: commit it as it is, markers and all
    git(a, "commit", "-qam", "merged badly")
    both = {r["id"] for n in ("events.jsonl",) for r in records(b, n)}
    tick = run("prompt", str(a), "after a bad merge", env=env_a)
    assert tick.returncode != 0 and "ledger_conflict" in tick.stderr, tick.stderr
    assert "holon doctor --repair" in tick.stderr
    doctor = json.loads(run("doctor", str(a), "--json", env=env_a).stdout)
    assert any(f["check"] == "ledgers" for f in doctor["agents"][0]["findings"])
    repaired = ok(env_a, "doctor", "--repair", str(a))
    assert "rejects" in repaired.stdout
    good = [json.loads(x) for x in (a / ".holon/ledger/events.jsonl").read_text().splitlines()]
    assert both <= {r["id"] for r in good}
    assert [r["event_seq"] for r in good] == list(range(1, len(good) + 1))
    assert not ledgermerge.problems(Home(a), full=True)
    ok(env_a, "tick", str(a), "--model", script({"text": "3"}, name="c.jsonl"))
    assert "after a bad merge" in (a / ".holon/ledger/messages.jsonl").read_text()


def test_renumbering_is_the_same_whichever_side_pulled(tmp_path, script):
    a, b, _env_a, _env_b = two_clones(tmp_path, script)
    c = tmp_path / "c"
    git(tmp_path, "clone", "-q", str(b), str(c))
    git(a, "pull", "-q", "--no-rebase", "--no-edit", str(b), "main")
    git(c, "pull", "-q", "--no-rebase", "--no-edit", str(tmp_path / "a"), "main")
    for home in (a, c):
        ledgermerge.renumber(home / ".holon" / "ledger" / "events.jsonl")
    assert records(a, "events.jsonl") == records(c, "events.jsonl")

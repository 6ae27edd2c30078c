"""`holon gc` through the real CLI: retention removes only what no reader needs; --dry-run
changes nothing; a busy agent is skipped."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from helpers import holon, init_agent, run, subprocess_env, write_script

from holon.cli.gc import render
from holon.home.layout import Home
from holon.ops.gc import GcReport, Removal
from holon.store import segments
from holon.store.locks import FileLock

OLD = time.time() - 90 * 86400


def _snapshot(root) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = (Path(p).read_bytes(), os.stat(p).st_mode)
    return out


def _task(home, task_id: str, status: str, finished: str | None, result_msg: str = "") -> None:
    d = home / ".holon" / "tasks" / task_id
    d.mkdir(mode=0o700)
    rec = {"id": task_id, "status": status, "finished_at": finished, "kind": "command_task"}
    rec.update(command={"cmd": "true"}, result_message_id=result_msg or None)
    (d / "task.json").write_text(json.dumps(rec))
    (d / "output.log").write_text("out\n" * 100)


def _gc(*args) -> list[dict]:
    return json.loads(holon("gc", *args, "--json").stdout)


def test_gc_keeps_what_readers_need_and_dry_run_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLON_RETENTION_LEDGER_SEGMENT_BYTES", "5000")
    monkeypatch.setenv("HOLON_RETENTION_SEGMENT_KEEP_DAYS", "30")
    home = init_agent()
    big = "printf '%*s' 60000 '' | tr ' ' y; echo"
    call = {"id": "c1", "name": "ExecCommand", "arguments": {"cmd": big, "login": False}}
    rounds = [{"text": "", "tool_calls": [call]}, {"text": "done"}] + [{"text": "ok"}] * 3
    model = write_script(tmp_path / "s.jsonl", rounds)
    for text in ("make output", "two", "three"):
        holon("prompt", "a", text, "--model", model)
    arts = home / ".holon" / "artifacts"
    (used,) = list(arts.iterdir())  # the full stdout, named by the tool result in the window
    stale = arts / "exec-stdout-0badc0de.log"
    stale.write_text("old output\n")
    for p in (used, stale):
        os.utime(p, (OLD, OLD))
    old_iso = "2020-01-01T00:00:00.000Z"
    _task(home, "task_0old", "completed", old_iso)
    _task(home, "task_0running", "running", None)
    now_iso = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    _task(home, "task_0recent", "completed", now_iso)
    holon("prompt", "a", "later", "--no-wait", "--model", model)  # an unsettled message
    pending = next((home / ".holon" / "queue" / "new").iterdir())
    _task(home, "task_0unsettled", "failed", old_iso, json.loads(pending.read_text())["id"])
    ledger = home / ".holon" / "ledger" / "transcript.jsonl"
    events = ledger.with_name("events.jsonl")
    segs, event_segs = segments.segments(ledger), segments.segments(events)
    assert len(segs) >= 2 and len(event_segs) >= 2
    for s in segs + event_segs:
        os.utime(s.path, (OLD, OLD))

    before = _snapshot(home)
    (dry,) = _gc("a", "--dry-run")
    assert _snapshot(home) == before  # byte for byte, modes included
    assert dry["outcome"] == "dry_run"
    removed = {r["path"] for r in dry["removed"]}
    assert ".holon/artifacts/exec-stdout-0badc0de.log" in removed
    assert ".holon/tasks/task_0old" in removed
    assert not any(k in p for p in removed for k in ("running", "recent", "unsettled"))
    assert not any(used.name in p for p in removed)
    # transcript segments stay (the replay window and the memory index still read them); an
    # old events segment may go (no reader needs what the events ledger held long ago)
    assert {r["path"] for r in dry["removed"] if r["kind"] == "segment"} == {
        s.path.relative_to(home).as_posix() for s in event_segs[:-1]
    }
    text = holon("gc", "a", "--dry-run").stdout
    assert "would remove artifact .holon/artifacts/exec-stdout-0badc0de.log" in text

    holon("memory", "search", "a", "anything")  # the index catches up on every segment
    (done,) = _gc("a")
    assert done["outcome"] == "done" and done["bytes_freed"] == sum(
        r["bytes"] for r in done["removed"]
    )
    gone = {r["path"] for r in done["removed"]}
    assert removed <= gone and not stale.exists() and used.exists()
    assert not (home / ".holon" / "tasks" / "task_0old").exists()
    # the context window still replays the whole transcript: its segments stay
    assert [s.path for s in segments.segments(ledger)] == [s.path for s in segs]
    left = segments.segments(events)
    assert [s.path for s in left] == [
        event_segs[-1].path
    ]  # the newest segment stays: its name holds the offsets' base
    seqs = [json.loads(x)["event_seq"] for x in holon("events", "a", "--jsonl").stdout.split()]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[0] > 1
    # every reader still works on what is left
    entries = [json.loads(x) for x in holon("transcript", "a", "--jsonl").stdout.splitlines()]
    assert entries[-1]["kind"] == "turn_terminal"
    holon("tick", "a", "--model", model)
    assert holon("memory", "search", "a", "later").returncode == 0
    # the last turn may rotate the events ledger once more: the segment that was the newest (and
    # is old) may go now; nothing else, and then nothing more to do
    rest = _gc("a")[0]["removed"]
    assert all(r["kind"] == "segment" and "/events." in r["path"] for r in rest), rest
    assert _gc("a")[0]["removed"] == []

    lock = FileLock(Home(home, "a").turn_lock)
    lock.acquire(blocking=False)
    try:
        (busy,) = _gc("a")
        assert busy["outcome"] == "busy" and busy["removed"] == []
        assert "busy" in holon("gc", "--all").stdout
    finally:
        lock.release()


def test_gc_needs_an_agent_or_all():
    proc = holon("gc", check=False)
    assert proc.returncode == 2 and "missing_agent" in proc.stderr


def test_render_lists_each_removal_and_the_total():
    r = GcReport("a", "/h", "dry_run", [Removal("artifact", ".holon/artifacts/x.log", 10, "old")])
    assert render(r).splitlines() == [
        "a: would remove artifact .holon/artifacts/x.log (10 bytes, old)",
        "a: would remove 1 item(s), 10 bytes",
    ]


def test_gc_all_reports_a_broken_home_and_still_collects_the_others():
    init_agent("good")
    broken = init_agent("broken")
    (broken / ".holon" / "agent.json").unlink()
    proc = holon("gc", "--all", "--json", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    by_id = {r["agent_id"]: r for r in json.loads(proc.stdout)}
    assert by_id["good"]["outcome"] == "done"
    assert by_id["broken"]["outcome"] == "error" and "agent.json" in by_id["broken"]["error"]
    text = holon("gc", "--all", check=False)
    assert text.returncode == 1 and "broken: not collected: broken: agent.json" in text.stderr
    assert "good: removed 0 item(s)" in text.stdout


def _state(home) -> dict[str, bytes]:
    """What gc may change, by path under the home: files, and directories as present."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, names in os.walk(home):
        rel = os.path.relpath(dirpath, home)
        out[rel + "/"] = b""
        for n in names:
            if n.endswith(".lock") or n == "gc.json":
                continue
            out[os.path.join(rel, n)] = Path(dirpath, n).read_bytes()
    return out


def test_gc_killed_at_any_step_finishes_on_the_next_run(tmp_path, monkeypatch):
    """A kill before any of gc's unlinks leaves a home every reader still works on, and the next
    gc ends in exactly the state one uninterrupted gc leaves: nothing kept is lost, nothing
    removed comes back."""
    monkeypatch.setenv("HOLON_RETENTION_LEDGER_SEGMENT_BYTES", "3000")
    monkeypatch.setenv("HOLON_RETENTION_SEGMENT_KEEP_DAYS", "30")
    home = init_agent()
    model = write_script(tmp_path / "s.jsonl", [{"text": "ok " * 200}] * 6)
    for text in ("one", "two", "three", "four"):
        holon("prompt", "a", text, "--model", model)
    arts = home / ".holon" / "artifacts"
    arts.mkdir(exist_ok=True)
    for i in range(3):
        (arts / f"exec-stdout-0badc0d{i}.log").write_text("old output\n")
        os.utime(arts / f"exec-stdout-0badc0d{i}.log", (OLD, OLD))
    for i in range(2):
        _task(home, f"task_0old{i}", "completed", "2020-01-01T00:00:00.000Z")
    _task(home, "task_0running", "running", None)
    for s in segments.segments(home / ".holon" / "ledger" / "events.jsonl"):
        os.utime(s.path, (OLD, OLD))
    pristine = tmp_path / "pristine"
    os.rename(home, pristine)

    def fresh():
        if home.exists():
            shutil.rmtree(home)
        shutil.copytree(pristine, home, symlinks=True)

    fresh()
    (reference,) = _gc("a")
    steps = len(reference["removed"])
    assert reference["outcome"] == "done" and steps >= 6
    expected = _state(home)
    trace = tmp_path / "trace"
    fresh()
    with monkeypatch.context() as m:
        m.setenv("HOLON_CRASH_TRACE", str(trace))
        holon("gc", "a")
    n_steps = sum(1 for line in trace.read_text().splitlines() if " gc." in line)
    assert n_steps > steps  # a task directory takes two steps
    for n in range(1, n_steps + 1):
        fresh()
        with monkeypatch.context() as m:
            m.setenv("HOLON_CRASH_AT", f"gc.*:{n}")
            killed = holon("gc", "a", check=False)
        assert killed.returncode == -9, (n, killed.stderr)
        listed = holon("task", "list", "a", "--json", check=False)
        assert listed.returncode == 0, (n, listed.stderr)  # readers still work mid-way
        assert holon("events", "a", "--jsonl").returncode == 0
        (again,) = _gc("a")
        assert again["outcome"] == "done", n
        assert _state(home) == expected, n


def _two_children(tmp_path) -> tuple[Path, tuple[str, str], str]:
    """Parent p with two finished private children, the first archived long ago: (p's home,
    (old child id, its supervision task id), the recent child's id)."""
    parent = init_agent("p")
    spawn = json.dumps({"initial_message": "do it"})
    done = []
    for i in range(2):
        out = json.loads(holon("tool", "call", "p", "SpawnAgent", "--input", spawn).stdout)
        child_id = out["result"]["child_agent_id"]
        holon("model", "set", child_id, write_script(tmp_path / f"c{i}.jsonl", [{"text": "ok"}]))
        done.append((child_id, out["result"]["supervision_task_id"]))
    holon("model", "set", "p", write_script(tmp_path / "p.jsonl", [{"text": "noted"}] * 2))
    holon("tick", "--all")
    holon("tick", "--all")
    (old_id, old_task), (new_id, _) = done
    old_home = parent / ".holon" / "children" / old_id
    ident = json.loads((old_home / ".holon" / "agent.json").read_text())
    ident["archived_at"] = "2020-01-01T00:00:00.000Z"
    (old_home / ".holon" / "agent.json").write_text(json.dumps(ident))
    return parent, (old_id, old_task), new_id


def _archived() -> set[str]:
    registry = Path(os.environ["HOLON_HOME"]) / "registry.json"
    return set(json.loads(registry.read_text()).get("archived", {}))


def test_gc_removes_children_archived_long_ago(tmp_path):
    """A private child archived over task_keep_days ago goes (its home, its registry entry, an
    empty worktree directory); a recent one stays; the parent's task tools still answer."""
    parent, (old_id, old_task), new_id = _two_children(tmp_path)
    old_home = parent / ".holon" / "children" / old_id
    assert _archived() == {old_id, new_id}

    (report,) = _gc("p")
    assert [r["path"] for r in report["removed"] if r["kind"] == "child"] == [
        f".holon/children/{old_id}"
    ]
    assert not old_home.exists() and (parent / ".holon" / "children" / new_id).exists()
    assert _archived() == {new_id}
    assert holon("task", "output", "p", old_task).returncode == 0
    assert _gc("p")[0]["removed"] == []


def test_gc_killed_at_any_step_of_a_childs_removal_finishes_on_the_next_run(tmp_path):
    """Killed at each step (the registry write, the rename away from readers, the delete), gc
    leaves a host every reader works on, and the next gc removes the old child completely and
    nothing else."""
    parent, (old_id, old_task), new_id = _two_children(tmp_path)
    host = Path(os.environ["HOLON_HOME"])
    pristine = tmp_path / "pristine"
    shutil.copytree(host, pristine, symlinks=True)

    def fresh():
        shutil.rmtree(host)
        shutil.copytree(pristine, host, symlinks=True)

    trace = tmp_path / "trace"
    proc = run("gc", "p", env=subprocess_env(HOLON_CRASH_TRACE=str(trace)))
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[2] for line in trace.read_text().splitlines()]
    n_steps = len(names)
    # the registry's write and replace come before the rename that takes the home from readers
    first_gc = min(i for i, x in enumerate(names) if x.startswith("gc."))
    assert names.index("atomic.replace") < first_gc, names
    for n in range(1, n_steps + 1):
        fresh()
        killed = run("gc", "p", env=subprocess_env(HOLON_CRASH_AT=str(n)))
        assert killed.returncode == -9, (n, killed.stderr)
        for reader in (("agents", "--all"), ("task", "output", "p", old_task), ("status", "p")):
            assert holon(*reader, check=False).returncode == 0, (n, reader)
        (again,) = _gc("p")
        assert again["outcome"] == "done", n
        assert _archived() == {new_id}, n
        assert not (parent / ".holon" / "children" / old_id).exists(), n
        assert [e.name for e in (parent / ".holon" / "children").iterdir()] == [new_id], n
        assert _gc("p")[0]["removed"] == [], n


def test_help_and_man_page_name_every_retention_key():
    from helpers import REPO

    from holon.config import RETENTION_DEFAULTS

    out = run("gc", "--help").stdout
    page = (REPO / "man" / "holon-gc.1").read_text()
    for key in RETENTION_DEFAULTS:
        assert f"{key} = " in out and key in page.replace("\\_", "_"), key

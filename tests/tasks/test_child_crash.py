"""A process killed at each durable step of a spawn, or of a child's end, loses and repeats
nothing: the parent's next tick rolls the spawn back or finishes it, and the child's next tick
finishes its end (one task_result, one archive, its turn never run twice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, holon, init_agent, write_script

from holon.home.layout import is_home


def records(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def task_records(home: Path) -> list[dict]:
    tasks = home / ".holon" / "tasks"
    found = sorted(tasks.glob("*/task.json")) if tasks.is_dir() else []
    return [json.loads(p.read_text()) for p in found]


def registry() -> dict:
    """registry.json with every home path absolute (a path inside HOLON_HOME is stored relative)."""
    base = os.environ["HOLON_HOME"]
    data = json.loads((Path(base) / "registry.json").read_text())
    for part in ("agents", "archived"):
        data[part] = {k: os.path.join(base, v) for k, v in data.get(part, {}).items()}
    return data


def killed(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        [sys.executable, "-m", "holon", *args], capture_output=True, text=True, env=full
    )


def trace(tmp_path: Path, *args: str) -> list[str]:
    path = tmp_path / "trace"
    path.unlink(missing_ok=True)
    killed(*args, HOLON_CRASH_TRACE=str(path))
    return [line.split()[2] for line in path.read_text().splitlines()]


SPAWN = ("tool", "call", "p", "SpawnAgent", "--input", json.dumps({"initial_message": "go"}))


def fresh(monkeypatch, tmp_path: Path, n: int) -> Path:
    monkeypatch.setenv("HOLON_HOME", str(tmp_path / f"h{n}"))
    return init_agent("p")


def test_spawn_killed_at_each_step_is_rolled_back_or_finished(tmp_path, monkeypatch):
    fresh(monkeypatch, tmp_path, 0)
    steps = trace(tmp_path, *SPAWN)
    first = steps.index("child.record") - 1  # from the tracking write before the record
    assert "child.home" in steps and "child.running" in steps
    outcomes = set()
    for n in range(first, len(steps) + 1):
        parent = fresh(monkeypatch, tmp_path, n)
        proc = killed(*SPAWN, HOLON_CRASH_AT=str(n))
        assert proc.returncode == -9, (n, steps[n - 1], proc.stderr)
        holon("tick", "p", "--wait")  # the parent's next tick: recovery reconciles the spawn
        recs = task_records(parent)
        state = json.loads((parent / ".holon" / "state.json").read_text())
        children = parent / ".holon" / "children"
        if not recs:
            outcomes.add("rolled_back")
            assert state["active_task_ids"] == [], n
            assert not any(children.iterdir()) if children.is_dir() else True, n
            assert set(registry()["agents"]) == {"p"}, n
            continue
        outcomes.add("finished")
        (rec,) = recs
        assert rec["status"] == "running" and rec["phase"] == "running", (n, rec)
        assert state["active_task_ids"] == [rec["id"]], n
        child = Path(rec["child_home"])
        assert is_home(child) and registry()["agents"][rec["child_agent_id"]] == str(child), n
        logged = [m["id"] for m in records(child / ".holon" / "ledger" / "messages.jsonl")]
        new = child / ".holon" / "queue" / "new"
        queued = [json.loads(p.read_text())["id"] for p in new.iterdir()]
        # the queue file is the admission (the ledger line follows it): one message, once
        assert len(queued) == 1 and set(logged) <= set(queued), (n, logged, queued)
        assert rec["initial_message_id"] == queued[0], n
    assert outcomes == {"rolled_back", "finished"}


def spawned(monkeypatch, tmp_path: Path, n: int) -> tuple[Path, dict]:
    parent = fresh(monkeypatch, tmp_path, n)
    out = json.loads(holon(*SPAWN).stdout)["result"]
    child_id = out["child_agent_id"]
    # a turn killed before its provider round was recorded asks the provider again
    script = write_script(tmp_path / f"child{n}.jsonl", [{"text": "child done"}] * 2)
    holon("model", "set", child_id, script)
    holon("model", "set", "p", write_script(tmp_path / f"p{n}.jsonl", [{"text": "noted"}]))
    return parent, out


@pytest.mark.parametrize("point", ["child.finish:1", "child.archive:1"])
def test_child_end_killed_is_finished_by_the_next_tick(tmp_path, monkeypatch, point):
    parent, out = spawned(monkeypatch, tmp_path, 1)
    check_end(parent, out, point)


def test_child_end_killed_at_each_step_after_the_settle(tmp_path, monkeypatch):
    parent, out = spawned(monkeypatch, tmp_path, 0)
    steps = trace(tmp_path, "tick", out["child_agent_id"])
    first = steps.index("child.finish") + 1
    for n in range(first, len(steps) + 1):
        parent, out = spawned(monkeypatch, tmp_path, n)
        check_end(parent, out, str(n))


def test_child_tick_killed_mid_turn_loses_and_repeats_nothing(tmp_path, monkeypatch):
    """A child's tick killed anywhere before its settle: the next `tick --all` runs the child's
    turn to its end, and the parent gets one task_result. Every step with HOLON_CRASH_SWEEP=full,
    a spread of them by default."""
    parent, out = spawned(monkeypatch, tmp_path, 0)
    steps = trace(tmp_path, "tick", out["child_agent_id"])
    last = steps.index("child.finish")
    points = list(range(1, last + 1))
    if os.environ.get("HOLON_CRASH_SWEEP") != "full":
        points = sorted({1, *points[:: max(1, len(points) // 6)], last})
    for n in points:
        parent, out = spawned(monkeypatch, tmp_path, 1000 + n)
        check_end(parent, out, str(n))


def check_end(parent: Path, out: dict, point: str) -> None:
    child_id = out["child_agent_id"]
    proc = killed("tick", child_id, HOLON_CRASH_AT=point)
    assert proc.returncode == -9, (point, proc.stderr)
    holon("tick", "--all")
    holon("tick", "--all")
    (rec,) = task_records(parent)
    assert rec["status"] == "completed" and rec["output_summary"] == "child done", point
    ledger = parent / ".holon" / "ledger"
    logged = {m["id"] for m in records(ledger / "messages.jsonl") if m["task_id"]}
    ran = {  # a message is logged after its queue file: killed between, it still ran once
        e["message_id"]
        for e in records(ledger / "transcript.jsonl")
        if e["kind"] == "message" and (e["data"].get("origin") or {}).get("task_id") == rec["id"]
    }
    assert logged | ran == {rec["result_message_id"]} and len(ran) == 1, point
    child = Path(rec["child_home"])
    turns = [e for e in records(child / ".holon" / "ledger" / "transcript.jsonl")]
    assert sum(e["kind"] == "turn_terminal" for e in turns) == 1, point
    assert child_id in registry()["archived"] and child_id not in registry()["agents"], point
    assert json.loads((child / ".holon" / "agent.json").read_text())["archived_at"], point


def test_the_ways_to_finish_a_child_race_to_one_result(tmp_path, monkeypatch):
    """A child whose end was interrupted, then its next tick, the parent's busy tick (which
    repairs a child's end) and TaskStop started together, in each of several rounds: the
    supervision task gets one terminal record and one task_result, whichever of them wins, and
    the child is archived."""
    for n in range(4):
        parent, out = spawned(monkeypatch, tmp_path, 2000 + n)
        child_id, task_id = out["child_agent_id"], out["supervision_task_id"]
        holon("model", "set", "p", write_script(tmp_path / f"pr{n}.jsonl", [{"text": "ok"}] * 4))
        holon("enqueue", "p", "--kind", "system_tick", "--text", "busy")  # p's tick runs a turn
        assert killed("tick", child_id, HOLON_CRASH_AT="child.finish:1").returncode == -9
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        racers = [
            subprocess.Popen(
                [sys.executable, "-m", "holon", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for args in (("tick", child_id), ("tick", "p"), ("task", "stop", "p", task_id))
        ]
        for proc in racers:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode in (0, 1), err
            assert "Traceback" not in err and "internal_error" not in err, err
        holon("tick", "--all")
        holon("tick", "--all")
        (rec,) = task_records(parent)
        assert rec["status"] in ("completed", "cancelled") and rec["result_message_id"], rec
        ledger = parent / ".holon" / "ledger"
        results = [m["id"] for m in records(ledger / "messages.jsonl") if m["task_id"] == task_id]
        assert results == [rec["result_message_id"]], (n, results)
        ran = [
            e["message_id"]
            for e in records(ledger / "transcript.jsonl")
            if e["kind"] == "message" and (e["data"].get("origin") or {}).get("task_id") == task_id
        ]
        assert ran == results, (n, ran)
        assert child_id in registry()["archived"] and child_id not in registry()["agents"], n

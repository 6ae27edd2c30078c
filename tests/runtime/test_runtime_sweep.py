"""holon.runtime.sweep over the host due index: writers mark it, a pass ticks what it names and
clears only idle agents, and the full pass finds what no writer marked."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from holon.agent import admission, nextdue, wakehints
from holon.home import dueindex
from holon.home.init import init_home
from holon.home.shard import Shard
from holon.paths import agents_dir
from holon.runtime.sweep import sweep
from holon.runtime.tick import tick
from holon.tasks import store as task_store


@pytest.fixture
def model(script, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", script(*[{"text": f"ok {i}"} for i in range(20)]))


def run_pass(shard: Shard | None = None) -> tuple[bool, dict[str, str]]:
    """(was it a full pass, agent id -> outcome)."""
    reports: list[dict] = []
    done = sweep(lambda h: tick(h, until_idle=True).to_dict(), reports.append, shard=shard)
    return done.full, {r["agent_id"]: r["outcome"] for r in reports}


def entries() -> list[str]:
    return sorted(n for n in dueindex.listing() or [] if not n.startswith("."))


def queue(home, text: str = "go") -> None:
    admission.admit(home, "enqueue", "system_tick", admission.text_body(text))


def settle_record() -> None:
    """Let a full pass record its signature (a directory changed within SETTLE_S is not)."""
    for name in os.listdir(dueindex.index_dir()):
        if name.startswith(".scan"):
            path = Path(dueindex.index_dir(), name)
            record = json.loads(path.read_text())
            record["signature"] = dueindex.signature()
            path.write_text(json.dumps(record))


def test_marks_drive_the_pass_and_idle_agents_are_cleared(model):
    a, b = init_home(None, "a"), init_home(None, "b")
    assert run_pass() == (True, {"a": "idle", "b": "idle"})  # no index yet: a full pass
    settle_record()
    assert entries() == [] and run_pass() == (False, {})
    queue(a)
    assert entries() == [dueindex.entry_name(a.root)]
    full, outcomes = run_pass()
    assert not full and outcomes == {"a": "ran"} and not a.queue.pending()
    assert entries() == []  # idle again: cleared
    wakehints.submit(b, trigger_id=None, source="test")
    assert run_pass() == (False, {"b": "woke"}) and entries() == []  # a liveness-only wake


def test_a_timer_is_an_entry_with_its_time(model, monkeypatch):
    a = init_home(None, "a")
    run_pass()
    settle_record()
    nextdue.lower(a, time.time() + 3600)
    (name,) = entries()
    assert name.startswith(dueindex.key_of(a.root) + "@")
    assert run_pass() == (False, {}) and entries() == [name]  # not due yet: not even looked at
    nextdue.lower(a, time.time() - 1)
    full, outcomes = run_pass()  # due by the index and by next_due: the tick finds no timer
    assert not full and list(outcomes) == ["a"] and entries() == []  # and nothing is scheduled


def test_an_agent_stays_marked_while_a_task_runs(model):
    a = init_home(None, "a")
    run_pass()
    settle_record()
    task_store.set_active(a, "task_x", os.getpid())
    assert entries() == [dueindex.entry_name(a.root)]
    run_pass()  # our pid is no task's supervisor: task recovery runs and the marker goes
    assert not os.listdir(a.tasks_active) and entries() == []


def test_the_full_pass_finds_what_no_writer_marked(model, holon_env):
    a = init_home(None, "a")
    run_pass()
    settle_record()
    shutil.copytree(a.root, agents_dir() / "b")  # a home copied in: agents/ changed
    b = agents_dir() / "b"
    queue(init_home(None, "c"))
    full, outcomes = run_pass()
    assert full and outcomes["c"] == "ran" and outcomes["b"] == "idle"
    settle_record()
    # a message written by an older holon (no mark): found by the periodic full pass
    a.queue.put(json.loads((b / ".holon" / "agent.json").read_text()), "normal")
    assert run_pass()[1] == {}
    record = Path(dueindex.index_dir(), ".scan.json")
    doc = json.loads(record.read_text())
    doc["full_pass_at"] -= dueindex.FULL_PASS_EVERY_S
    record.write_text(json.dumps(doc))
    full, outcomes = run_pass()
    assert full and outcomes["a"] in ("ran", "idle") and not a.queue.pending()


def test_homes_registered_elsewhere_and_unknown_ones(model, tmp_path):
    out = init_home(str(tmp_path / "far" / "x"), "x")
    run_pass()
    settle_record()
    queue(out)
    assert run_pass() == (False, {"x": "ran"})
    stray = init_home(None, "gone")
    run_pass()
    settle_record()
    queue(stray)
    shutil.rmtree(stray.root)  # agents/ changed: the full pass drops the entry of a gone home
    run_pass()
    assert entries() == []


def test_a_shard_ticks_and_settles_only_its_agents(model):
    homes = [init_home(None, f"s{i}") for i in range(6)]
    for shard in (Shard(0, 2), Shard(1, 2)):
        run_pass(shard)
    settle_record()
    for home in homes:
        queue(home)
    seen: dict[str, int] = {}
    for index in (0, 1):
        full, outcomes = run_pass(Shard(index, 2))
        assert not full
        for agent_id, outcome in outcomes.items():
            assert outcome == "ran" and Shard(index, 2).owns(agent_id)
            seen[agent_id] = seen.get(agent_id, 0) + 1
    assert seen == {h.agent_id: 1 for h in homes} and entries() == []


def periodic_pass_due() -> None:
    """Make the last full pass FULL_PASS_EVERY_S old: the next pass is the periodic one."""
    record = Path(dueindex.index_dir(), ".scan.json")
    doc = json.loads(record.read_text())
    doc["full_pass_at"] -= dueindex.FULL_PASS_EVERY_S
    record.write_text(json.dumps(doc))


def checked_in_pass(monkeypatch) -> tuple[list[str], dict[str, str]]:
    """(the agents the pass ran the idle check on, agent id -> outcome) of one pass."""
    from holon.runtime import sweep as sweep_module

    looked: list[str] = []
    real = sweep_module.check
    monkeypatch.setattr(sweep_module, "check", lambda h: looked.append(h.agent_id) or real(h))
    outcomes = run_pass()[1]
    monkeypatch.setattr(sweep_module, "check", real)
    return sorted(set(looked)), outcomes


def quiet_since(homes, settle: float) -> None:
    """Wait (bounded) until the homes' last change is more than `settle` seconds old, so a full
    pass trusts their stamps."""
    deadline = time.monotonic() + 10
    newest = max(os.stat(p).st_ctime for h in homes for p in Path(h.root).rglob("*"))
    while time.time() <= newest + 2 * settle and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_periodic_pass_rechecks_only_what_changed_behind_holons_back(
    model, monkeypatch, tmp_path
):
    monkeypatch.setattr(dueindex, "SETTLE_S", 0.05)
    names = ("copied", "edited", "scheduled", "replaced", "timer", "still")
    homes = {n: init_home(None, n) for n in names}
    for name in ("timer", "edited"):
        nextdue.lower(homes[name], time.time() + 3600)
    new = homes["copied"].queue.new
    queue(homes["copied"])  # a message taken out now, to be copied in by hand later
    (name,) = os.listdir(new)
    os.rename(new / name, tmp_path / name)
    dueindex.unlink(dueindex.entry_name(homes["copied"].root))
    quiet_since(homes.values(), 0.05)
    assert run_pass()[0]  # the first full pass stamps every home
    assert checked_in_pass(monkeypatch)[0] == []  # no periodic pass yet, the timer is ahead
    # behind holon's back: a message copied in, next_due rewritten in place, state.json replaced
    shutil.copy(tmp_path / name, new / name)
    with open(homes["edited"].next_due, "r+") as fh:  # in place: the directory does not change
        fh.write(f"{time.time() - 1:.3f}")
        fh.truncate()
    homes["scheduled"].next_due.write_text(f"{time.time() - 1}\n")  # where there was none
    state = homes["replaced"].state_json
    shutil.copy(state, str(state) + ".new")
    os.replace(str(state) + ".new", state)
    periodic_pass_due()
    looked, outcomes = checked_in_pass(monkeypatch)
    assert looked == ["copied", "edited", "replaced", "scheduled"]  # not the timer (ahead)
    assert outcomes["copied"] == "ran" and not homes["copied"].queue.pending()
    for name in ("edited", "scheduled"):  # ticked: no timer there, the index refreshed
        assert not homes[name].next_due.exists()
    assert outcomes["replaced"] == outcomes["still"] == "idle"
    # the clock moves past the recorded timer with no file changed: the next pass ticks it
    monkeypatch.setenv("HOLON_NOW", str(time.time() + 7200))
    periodic_pass_due()
    looked, outcomes = checked_in_pass(monkeypatch)
    assert "timer" in looked and "still" not in looked and not homes["timer"].next_due.exists()


def test_an_unreadable_stamp_record_means_every_home_is_checked(model, monkeypatch):
    monkeypatch.setattr(dueindex, "SETTLE_S", 0.05)
    homes = [init_home(None, n) for n in ("a", "b")]
    quiet_since(homes, 0.05)
    run_pass()
    periodic_pass_due()
    assert checked_in_pass(monkeypatch)[0] == []  # both stamped and unchanged
    root = json.dumps(str(homes[0].root))
    for garbage in (
        '{"homes": [1]}',
        "{not",
        f'{{"homes": {{{root}: 1}}}}',
        f'{{"homes": {{{root}: [1]}}}}',
    ):
        Path(dueindex.index_dir(), ".stamps.json").write_text(garbage)
        periodic_pass_due()
        assert checked_in_pass(monkeypatch)[0] == ["a", "b"]


def test_a_shards_full_pass_stamps_only_its_agents(model, monkeypatch):
    from holon.runtime import sweep as sweep_module

    homes = [init_home(None, f"s{i}") for i in range(6)]
    stamped: list[str] = []
    real = sweep_module.stamp
    monkeypatch.setattr(sweep_module, "stamp", lambda r, *a: stamped.append(r) or real(r, *a))
    assert run_pass(Shard(0, 2))[0]
    mine = {str(h.root) for h in homes if Shard(0, 2).owns(h.agent_id)}
    assert mine and set(stamped) == mine


def test_an_entry_removed_by_hand_is_restored_by_the_periodic_pass(model, monkeypatch):
    monkeypatch.setattr(dueindex, "SETTLE_S", 0.05)
    a = init_home(None, "a")
    nextdue.lower(a, time.time() + 3600)
    quiet_since([a], 0.05)
    run_pass()
    (name,) = entries()
    periodic_pass_due()
    assert checked_in_pass(monkeypatch)[0] == [] and entries() == [name]  # as it was left
    dueindex.unlink(name)
    periodic_pass_due()
    assert checked_in_pass(monkeypatch)[0] == ["a"] and entries() == [name]

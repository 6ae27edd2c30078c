"""holon.agent.handle: the run state (state.json, volatile) and the operator's settings
(settings.json, tracked) are two files that read as one AgentState."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from helpers import run, subprocess_env

from holon.agent import control
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home import runstate
from holon.home.layout import Home
from holon.model.records import AgentState, AgentStatus
from holon.store import jsonl
from holon.store.atomic import read_json, write_json


def _events(home, kind):
    return [e for e in jsonl.read(home.events) if e["kind"] == kind]


def test_run_state_changes_leave_settings_untouched(agent):
    a = Agent(agent)
    before = agent.settings_json.stat()
    for i in range(5):  # what a turn does to state: pids, run ids, counters, timestamps
        a.update_state(
            lambda s, i=i: (setattr(s, "run_owner_pid", 1000 + i), setattr(s, "turn_index", i))
        )
    a.update_state(lambda s: setattr(s, "status", AgentStatus.awake_running))
    after = agent.settings_json.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert read_json(agent.state_json)["turn_index"] == 4


def test_operator_choices_are_written_to_settings_once(agent):
    a = Agent(agent)
    control.pause(agent)
    assert read_json(agent.settings_json)["lifecycle"] == "paused"
    written = agent.settings_json.stat().st_mtime_ns
    a.update_state(lambda s: setattr(s, "last_tick_at", "2027-01-01T00:00:00.000Z"))
    assert agent.settings_json.stat().st_mtime_ns == written
    a.update_state(lambda s: setattr(s, "model_override", "p/m"))
    assert read_json(agent.settings_json) == {
        "schema_version": 1,
        "lifecycle": "paused",
        "model_override": "p/m",
        "model_summaries": False,
        "current_work_item_id": None,
        "active_workspace_id": "agent_home",
        "attached_workspaces": [],
    }
    control.resume(agent)
    assert read_json(agent.settings_json)["lifecycle"] is None
    assert read_json(agent.state_json)["settings_basis"] == {
        k: v for k, v in read_json(agent.settings_json).items() if k != "schema_version"
    }


def test_settings_changed_outside_holon_win(agent):
    """A checkout or an edit of settings.json: its fields win, and state.json follows at once
    (plain readers of state.json, such as admission's stopped check, see it)."""
    a = Agent(agent)
    a.update_state(lambda s: setattr(s, "run_owner_pid", 4321))
    data = read_json(agent.settings_json)
    write_json(agent.settings_json, {**data, "lifecycle": "stopped", "model_override": "x/y"})
    state = a.state()
    assert state.status is AgentStatus.stopped and state.model_override == "x/y"
    assert state.run_owner_pid == 4321  # the run state is kept
    on_disk = read_json(agent.state_json)
    assert on_disk["status"] == "stopped" and on_disk["model_override"] == "x/y"
    r = run("prompt", "a", "hello", "--no-wait")
    assert r.returncode == 3 and "agent_stopped" in r.stderr


def test_a_hand_edited_run_state_is_kept(agent):
    a = Agent(agent)
    a.state()
    data = read_json(agent.state_json)
    write_json(agent.state_json, {**data, "status": "paused", "pending": 3})
    assert a.state().status is AgentStatus.paused and a.state().pending == 3


def test_a_missing_run_state_is_rebuilt_from_settings_without_an_event(agent):
    control.stop(agent)
    Agent(agent).update_state(lambda s: setattr(s, "model_override", "p/m"))
    agent.state_json.unlink()
    events = len(list(jsonl.read(agent.events)))
    a = Agent(agent).ensure()  # a fresh clone: preparing the home writes a run state at once
    assert agent.state_json.exists()
    state = a.state()
    assert state.status is AgentStatus.stopped and state.model_override == "p/m"
    assert state.run_owner_pid is None and state.inflight == {}
    assert len(list(jsonl.read(agent.events))) == events  # nothing happened worth an event


def test_a_corrupt_run_state_is_set_aside_and_rebuilt(agent):
    control.pause(agent)
    conflict = '{\n<<<<<<< HEAD\n  "status": "awake_idle"\n=======\n>>>>>>> theirs\n}\n'
    agent.state_json.write_text(conflict)
    state = Agent(agent).state()
    assert state.status is AgentStatus.paused  # the settings survive
    [aside] = [p for p in agent.dot.iterdir() if p.name.startswith("state.json.corrupt-")]
    assert aside.read_text() == conflict
    assert read_json(agent.state_json)["status"] == "paused"
    [ev] = _events(agent, "state_rebuilt")
    assert ev["data"] == {
        "reason": "corrupt",
        "problem": "is not valid JSON (it holds a merge conflict marker)",
        "set_aside": f".holon/{aside.name}",
    }


def test_a_run_state_of_the_wrong_shape_is_set_aside_too(agent):
    write_json(agent.state_json, {"id": "a", "status": "dancing", "inflight": []})
    assert Agent(agent).state().status is AgentStatus.awake_idle
    [ev] = _events(agent, "state_rebuilt")
    assert ev["data"]["reason"] == "corrupt" and "status" in ev["data"]["problem"]


def test_a_corrupt_run_state_that_cannot_be_set_aside_is_a_clear_error(agent, monkeypatch):
    agent.state_json.write_text("<<<<<<< HEAD\n")

    def refuse(home):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(runstate, "set_aside", refuse)
    with pytest.raises(HolonError) as err:
        Agent(agent).state()
    assert err.value.kind == "corrupt_state"
    assert (
        err.value.message
        == f"{agent.state_json} is not valid JSON (it holds a merge conflict marker)"
    )
    assert err.value.hint.startswith("restore it from git or delete it")


def test_status_works_over_a_corrupt_run_state_through_the_cli(agent):
    agent.state_json.write_text("<<<<<<< HEAD\n")
    r = run("status", "a", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "awake_idle"
    assert [e["data"]["reason"] for e in _events(agent, "state_rebuilt")] == ["corrupt"]


def test_a_corrupt_settings_file_is_never_discarded(agent):
    agent.settings_json.write_text('{"lifecycle": "paused",\n<<<<<<< HEAD\n')
    r = run("status", "a")
    assert r.returncode == 1
    first, hint = r.stderr.splitlines()[:2]
    problem = "is not valid JSON (Expecting property name enclosed in double quotes at line 2)"
    assert first == f"holon: corrupt_state: {agent.settings_json} {problem}"
    assert hint.startswith("hint: restore it from git (`git checkout -- .holon/settings.json`)")
    assert agent.settings_json.read_text().startswith('{"lifecycle": "paused"')


def test_a_state_ahead_of_the_ledgers_is_rebuilt(agent):
    """A restored older commit: the run state names transcript offsets that no longer exist."""
    a = Agent(agent)
    jsonl.append(agent.transcript, {"kind": "message", "turn_id": "t1", "data": {}})
    size = agent.transcript.stat().st_size

    def ahead(s):
        s.context.window_start = size + 500
        s.inflight["msg_gone"] = {"turn_id": "t9", "transcript_offset": size + 400, "pid": 1}
        s.status = AgentStatus.awake_running
        s.run_owner_pid = 99999

    a.update_state(ahead)
    fresh = Agent(agent).state()
    assert fresh.context.window_start == 0 and fresh.inflight == {}
    assert fresh.status is AgentStatus.awake_idle and fresh.run_owner_pid is None
    [ev] = _events(agent, "state_rebuilt")
    assert ev["data"] == {"reason": "ledger_rewound", "problem": None, "set_aside": None}
    assert not runstate.rewound(agent, AgentState.model_validate(read_json(agent.state_json)))


def test_a_clone_with_only_tracked_files_takes_a_prompt(agent, tmp_path):
    """Only what git keeps: AGENTS.md, memory/, .holon/{agent,settings}.json, the ledgers."""
    clone = tmp_path / "clone"
    keep = ["AGENTS.md", "memory", ".holon/agent.json", ".holon/settings.json", ".holon/.gitignore"]
    for rel in keep:
        src, dst = agent.root / rel, clone / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.write_bytes(src.read_bytes())
    (tmp_path / "s.jsonl").write_text(json.dumps({"text": "hello from the clone"}) + "\n")
    env = subprocess_env(HOLON_MODEL=f"scripted/{tmp_path / 's.jsonl'}")
    r = run("prompt", str(clone), "hello", "--no-wait", "--json", env=env)
    assert r.returncode == 0, r.stderr
    home = Home(clone)
    assert len(home.queue.pending()) == 1 and home.queue.cur.is_dir() and home.locks.is_dir()
    status = json.loads(run("status", str(clone), "--json", env=env).stdout)
    assert status["queue"]["pending"] == 1 and status["status"] == "awake_idle"
    r = run("tick", str(clone), "--json", env=env)
    assert r.returncode == 0, r.stderr
    [turn] = json.loads(r.stdout)["agents"][0]["turns"]
    assert turn["status"] == "completed" and turn["final_text"] == "hello from the clone"
    assert home.queue.pending() == [] and os.path.isfile(home.state_json)

"""What a clone lacks and how it comes back: runtime directories (holon.home.layout), the
operator's settings (holon.home.settings) and the run state rebuilt from the ledgers
(holon.home.runstate)."""

from __future__ import annotations

import os
import shutil

import pytest

from holon import clock
from holon.errors import HolonError
from holon.home import runstate, settings
from holon.home.layout import DOT, RUNTIME_DIRS, USER_DIRS, Home
from holon.model.records import AgentState
from holon.store import jsonl
from holon.store.atomic import write_json

# -- runtime directories ------------------------------------------------------------------------


def _strip_to_tracked(home: Home) -> None:
    """What `git clone` gives back: files only, no empty or ignored directory."""
    for rel in ("queue", "locks", "tasks", "timers", "artifacts", "indexes", "ledger"):
        shutil.rmtree(home.dot / rel, ignore_errors=True)
    for rel in ("notes", "work", "skills"):
        shutil.rmtree(home.root / rel, ignore_errors=True)


def test_ensure_runtime_recreates_what_git_does_not_keep(agent):
    _strip_to_tracked(agent)
    home = Home(agent.root, "a")
    home.ensure_runtime()
    for rel in RUNTIME_DIRS:
        assert (home.dot / rel).is_dir(), rel
    for rel in USER_DIRS:
        assert (home.root / rel).is_dir(), rel
    assert home.queue.tmp.is_dir() and home.queue.dead.is_dir()


def test_ensure_runtime_runs_once_per_home_object(agent):
    home = Home(agent.root, "a")
    home.ensure_runtime()
    shutil.rmtree(home.dot / "queue")
    home.ensure_runtime()  # already checked: no syscalls, nothing re-created
    assert not (home.dot / "queue").exists()
    Home(agent.root, "a").ensure_runtime()  # a new Home (a new command) checks again
    assert home.queue.cur.is_dir()


def test_ensure_runtime_makes_no_home_out_of_a_plain_directory(tmp_path):
    Home(tmp_path / "plain").ensure_runtime()
    assert not (tmp_path / "plain").exists()
    (tmp_path / "dir").mkdir()
    Home(tmp_path / "dir").ensure_runtime()
    assert os.listdir(tmp_path / "dir") == []
    assert not (tmp_path / "dir" / DOT).exists()


# -- settings -----------------------------------------------------------------------------------


def test_settings_project_the_operators_choices():
    state = AgentState(id="a", status="paused", model_override="p/m", current_work_item_id="wi_1")
    chosen = settings.project(state.model_dump(mode="json"))
    assert chosen == {
        "lifecycle": "paused",
        "model_override": "p/m",
        "model_summaries": False,
        "current_work_item_id": "wi_1",
        "active_workspace_id": "agent_home",
        "attached_workspaces": [],
    }
    running = AgentState(id="a", status="awake_running", run_owner_pid=123)
    assert settings.project(running.model_dump(mode="json"))["lifecycle"] is None


@pytest.mark.parametrize(
    "status, lifecycle, expected",
    [
        ("awake_idle", "stopped", "stopped"),
        ("asleep", "paused", "paused"),
        ("paused", None, "awake_idle"),
        ("stopped", None, "awake_idle"),
        ("asleep", None, "asleep"),
        ("paused", "paused", "paused"),
    ],
)
def test_settings_overlay_decides_the_lifecycle(status, lifecycle, expected):
    state = {"id": "a", "status": status, "paused_from": "asleep", "model_override": None}
    chosen = {"lifecycle": lifecycle, "model_override": "x/y"}
    merged = settings.overlay(state, chosen)
    assert merged["status"] == expected and merged["model_override"] == "x/y"
    assert merged["paused_from"] == ("asleep" if status == expected else None)


def test_settings_read_fills_defaults_and_refuses_bad_values(agent):
    write_json(agent.settings_json, {"schema_version": 1, "model_override": "p/m"})
    assert settings.read(agent) == {
        "lifecycle": None,
        "model_override": "p/m",
        "model_summaries": False,
        "current_work_item_id": None,
        "active_workspace_id": "agent_home",
        "attached_workspaces": [],
    }
    for bad, problem in (
        ({"lifecycle": "asleep"}, "has an invalid lifecycle: 'asleep'"),
        ({"attached_workspaces": "ws"}, "has an invalid attached_workspaces: 'ws'"),
        ({"model_summaries": "yes"}, "has an invalid model_summaries: 'yes'"),
        ([1, 2], "is not a JSON object"),
    ):
        write_json(agent.settings_json, bad)
        with pytest.raises(HolonError) as err:
            settings.read(agent)
        assert err.value.kind == "corrupt_state"
        assert err.value.message == f"{agent.settings_json} {problem}"
    agent.settings_json.write_text('{\n<<<<<<< HEAD\n  "lifecycle": null\n')
    with pytest.raises(HolonError) as err:
        settings.read(agent)
    assert "is not valid JSON" in err.value.message and "git checkout" in err.value.hint
    agent.settings_json.unlink()
    assert settings.read(agent) is None


def test_effective_reads_state_json_as_the_agent_would_without_pydantic(agent):
    assert settings.effective(agent)["status"] == "awake_idle"
    chosen = settings.read(agent)
    write_json(agent.settings_json, {**chosen, "lifecycle": "stopped"})  # a checkout, an edit
    assert settings.effective(agent)["status"] == "stopped"
    agent.state_json.unlink()  # a fresh clone
    view = settings.effective(agent)
    assert view["status"] == "stopped" and view["settings_basis"]["lifecycle"] == "stopped"
    write_json(agent.settings_json, chosen)
    assert settings.effective(agent)["status"] == "awake_idle"
    agent.state_json.write_text("<<<<<<< HEAD\n")
    with pytest.raises(HolonError) as err:
        settings.effective(agent)
    assert err.value.kind == "corrupt_state" and str(agent.state_json) in err.value.message
    assert err.value.hint.startswith("restore it from git or delete it")


# -- the run state --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{\n<<<<<<< HEAD\n  "id": "a"\n=======\n>>>>>>> b\n', "merge conflict marker"),
        ("{not json", "is not valid JSON"),
        ("[]", "is not a valid run state"),
        ('{"id": "a", "status": "dancing"}', "is not a valid run state (status:"),
        ('{"id": "a", "inflight": []}', "is not a valid run state (inflight:"),
        ("\xff\xfe", "is not valid UTF-8"),
    ],
)
def test_an_unreadable_run_state_says_why(agent, text, problem):
    agent.state_json.write_bytes(text.encode("latin-1"))
    with pytest.raises(runstate.Unreadable) as err:
        runstate.read(agent)
    assert problem in str(err.value)


def test_a_missing_run_state_reads_as_none(agent):
    agent.state_json.unlink()
    assert runstate.read(agent) is None


def _transcript_bytes(home: Home, n: int) -> None:
    jsonl.append(home.transcript, {"kind": "note", "data": {"text": "x" * (n - 40)}})


def test_rewound_when_the_state_points_past_the_transcript(agent):
    _transcript_bytes(agent, 200)
    size = agent.transcript.stat().st_size
    ok = AgentState(id="a")
    ok.context.window_start = ok.context.episodes_through = size
    ok.inflight["msg_1"] = {"turn_id": "t", "transcript_offset": size}
    assert not runstate.rewound(agent, ok)
    for field in ("window_start", "episodes_through"):
        ahead = ok.model_copy(deep=True)
        setattr(ahead.context, field, size + 1)
        assert runstate.rewound(agent, ahead), field
    ahead = ok.model_copy(deep=True)
    ahead.inflight["msg_2"] = {"turn_id": "t2", "transcript_offset": size + 50}
    assert runstate.rewound(agent, ahead)
    ahead = ok.model_copy(deep=True)
    ahead.working_memory.active_episode_builder = {"start_offset": 0, "end_offset": size + 9}
    assert runstate.rewound(agent, ahead)


def _episode(start: int, end: int, last_index: int) -> dict:
    return {
        "id": f"ep_{end}",
        "transcript": {"start_offset": start, "end_offset": end},
        "turns": {"first_index": 0, "last_index": last_index},
        "summary": "s",
    }


def _event(kind: str, data: dict, created_at: str) -> dict:
    return {"kind": kind, "data": data, "created_at": created_at}


def test_rebuilt_recovers_the_window_the_turn_count_and_todays_tokens(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2027-01-15T08:00:00Z")
    _transcript_bytes(agent, 5000)
    for ep in (_episode(0, 1000, 3), _episode(1000, 2500, 7), _episode(2500, 9000, 9)):
        jsonl.append(agent.context_episodes, ep)  # the last one lies past a rewound transcript
    for ev in (
        _event("turn_terminal", {"token_usage": {"total_tokens": 500}}, "2027-01-14T23:59:00Z"),
        _event("context_compacted", {"window_start": 1000}, "2027-01-15T01:00:00Z"),
        _event("turn_terminal", {"token_usage": {"total_tokens": 40}}, "2027-01-15T02:00:00Z"),
        _event("context_compacted", {"window_start": 8000}, "2027-01-15T03:00:00Z"),
        _event("turn_terminal", {"token_usage": {"total_tokens": 2}}, "2027-01-15T04:00:00Z"),
    ):
        jsonl.append(agent.events, ev)
    state = runstate.rebuilt(agent, "a")
    assert state.id == "a" and state.status.value == "awake_idle"
    assert state.context.episodes_through == 2500  # the newest episode inside the transcript
    assert state.context.window_start == 1000  # the newest compaction inside it
    assert state.turn_index == 8
    assert state.token_usage_by_day == {"2027-01-15": 42}
    assert state.working_memory.archived_episode_count == 3
    assert state.inflight == {} and state.closure is None


def test_rebuilt_without_a_compaction_starts_after_the_newest_episode(agent):
    _transcript_bytes(agent, 3000)
    jsonl.append(agent.context_episodes, _episode(0, 1800, 4))
    state = runstate.rebuilt(agent, "a")
    assert state.context.window_start == state.context.episodes_through == 1800
    assert state.token_usage_by_day == {}


def test_rebuilt_from_nothing_is_the_default(agent):
    state = runstate.rebuilt(agent, "a")
    assert state.model_dump() == AgentState(id="a").model_dump()


def test_set_aside_keeps_the_unreadable_file(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2027-01-15T08:00:00Z")
    agent.state_json.write_text("<<<<<<< HEAD\n")
    aside = runstate.set_aside(agent)
    assert aside == agent.dot / "state.json.corrupt-20270115T080000.000Z"
    assert aside.read_text() == "<<<<<<< HEAD\n" and not agent.state_json.exists()
    assert runstate.set_aside(agent) is None
    assert clock.now_iso() == "2027-01-15T08:00:00.000Z"

"""holon.agent.preflight and the agent's own readers on corrupt files: what a turn cannot do
without stops the tick up front; a wake hint or a work item that cannot be read never does."""

from __future__ import annotations

import json
import os

import pytest

from holon import config
from holon.agent import budget, preflight, wakehints, workitems
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.store import jsonl


@pytest.mark.parametrize(
    "file, text, problem",
    [
        ("budget_json", "[1]", "budget.json is not a JSON object"),
        ("budget_json", "", "budget.json is empty"),
        ("workspace_json", '{"execution_root": 5}', "workspace.json has an invalid execution_root"),
        ("workspace_json", "{", "workspace.json is not valid JSON"),
        ("settings_json", '{"lifecycle": "dancing"}', "settings.json has an invalid lifecycle"),
        ("agent_json", '{"migrations": 3}', "agent.json has an invalid migrations"),
    ],
)
def test_check_raises_the_corrupt_file_a_turn_would_trip_on(agent, file, text, problem):
    a = Agent(agent)
    getattr(agent, file).write_text(text)
    with pytest.raises(HolonError) as err:
        preflight.check(a)
    assert err.value.kind == "corrupt_state" and problem in err.value.message
    assert err.value.hint


def test_check_passes_a_sound_home_and_rebuilds_a_bad_run_state(agent):
    agent.state_json.write_text("{")
    preflight.check(Agent(agent))
    assert any(p.name.startswith("state.json.corrupt-") for p in agent.dot.iterdir())


def test_a_corrupt_config_is_invalid_config(agent, holon_env):
    (holon_env / "config.toml").mkdir()
    config.reset()  # making the agent read config.toml (its default budget) before the change
    with pytest.raises(HolonError) as err:
        preflight.check(Agent(agent))
    assert err.value.kind == "invalid_config" and "not a regular file" in err.value.message


def test_setting_budgets_again_repairs_a_corrupt_budget_file(agent):
    agent.budget_json.mkdir()
    a = Agent(agent)
    with pytest.raises(HolonError):
        budget.limits(a)
    budget.set_limits(a, daily_tokens=10)
    assert budget.limits(a) == {"daily_tokens": 10}
    assert any(p.name.startswith("budget.json.corrupt-") for p in agent.dot.iterdir())


@pytest.mark.parametrize("how", ["garbage", "array", "directory", "fifo", "wrong_types"])
def test_a_corrupt_wake_hint_is_set_aside_and_still_wakes(agent, how):
    path = agent.wake_hint
    if how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    else:
        text = {
            "garbage": "\x00{",
            "array": "[]",
            "wrong_types": json.dumps({"deliveries": "x", "payloads": [{"nobody": 1}, 3]}),
        }[how]
        path.write_text(text)
    a = Agent(agent)
    fired = wakehints.convert(a)
    assert len(fired) == 1  # one system tick, as for any hint
    assert not os.path.lexists(path) and not os.path.lexists(agent.wake_hint_converting)
    kinds = [e["kind"] for e in jsonl.read(agent.events)]
    assert ("wake_hint_set_aside" in kinds) is (how != "wrong_types")


def test_a_new_hint_over_a_corrupt_one_starts_afresh(agent):
    agent.wake_hint.write_text("{torn")
    hint = wakehints.submit(agent, trigger_id=None, body="ping")
    assert hint["deliveries"] == 1 and [p["body"] for p in hint["payloads"]] == ["ping"]


def test_work_items_with_bad_fields_never_stop_a_tick(agent):
    a = Agent(agent)
    for rec in (
        {"id": "wi_1", "state": "open", "blocked_by": "x", "recheck_at": "not a time"},
        {"id": "../../escape", "state": "open"},
        {"id": 5},
        {"id": "wi_2", "state": "open", "blocked_by": "x", "recheck_at": 12},
    ):
        jsonl.append(agent.work_items, rec)
    assert set(workitems.load_all(agent)) == {"wi_1", "wi_2"}
    assert workitems.next_recheck(agent) is None
    assert workitems.due_rechecks(agent, 1e12) == []
    os.makedirs(agent.plan_path("wi_1").parent)
    os.mkfifo(agent.plan_path("wi_1"))
    art = workitems.view(agent, workitems.get(agent, "wi_1"), None)["plan_artifact"]
    assert art["refused"]["reason"] == "not_regular" and "preview" not in art  # named, not read
    assert a.id == "a"

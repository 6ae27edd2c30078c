"""holon.context.progress: after a settled turn, working memory and the open episode advance."""

from __future__ import annotations

from context_helpers import after_turn

from holon.agent import admission
from holon.agent.handle import Agent
from holon.context import episodes, progress, workingmemory
from holon.model.records import AgentStatus
from holon.runtime.tick import tick
from holon.store import jsonl


def _turn(i: int, **kw) -> dict:
    return {
        "turn_id": f"turn_{i}",
        "turn_index": i,
        "message_id": f"msg_{i}",
        "offset": 100 * i,
        "end": 100 * i + 90,
        "work_item_id": None,
        "workspace_id": "agent_home",
        "outcome": "completed",
        **kw,
    }


def _after(a: Agent, i: int, *, delivered: bool = False, **kw) -> list[dict]:
    call = {"id": "c1", "name": "ApplyPatch", "arguments": {"patch": "..."}}
    result = {
        "envelope": {"status": "success", "result": {"modified": [f"src/f{i}.py"]}},
    }
    return after_turn(
        a,
        turn=_turn(i, **kw),
        message={"text": f"ask {i}", "message_kind": "operator_prompt"},
        rounds=[{"text": "", "tool_calls": [call]}, {"text": f"done {i}", "tool_calls": []}],
        results={"0:c1": result},
        delivered=delivered,
    )


def _ledger(home) -> list[dict]:
    return list(jsonl.read(home.context_episodes))


def _finalized(home) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == "context_episode_finalized"]


def test_a_settled_turn_advances_working_memory_and_the_open_episode(agent):
    a = Agent(agent)
    assert _after(a, 0) == []
    wm = a.state().working_memory
    assert wm.revision == 1 and wm.last_turn_id == "turn_0"
    assert wm.current["files"] == ["src/f0.py"] and wm.current["last_result"] == "done 0"
    assert wm.pending_delta == [f"+ {line}" for line in workingmemory.render(wm.current)]
    builder = wm.active_episode_builder
    assert builder["turns"] == 1 and builder["turn_ids"] == ["turn_0"]
    assert wm.active_episode_id == builder["id"]
    assert _ledger(agent) == [] and _finalized(agent) == []
    _after(a, 1)
    wm = a.state().working_memory
    assert wm.revision == 2 and wm.current["files"] == ["src/f0.py", "src/f1.py"]
    assert wm.active_episode_builder["id"] == builder["id"]
    assert wm.active_episode_builder["turns"] == 2


def test_a_repeated_call_for_the_same_turn_is_a_no_op(agent):
    a = Agent(agent)
    _after(a, 0)
    before = a.state().model_dump()
    assert _after(a, 0) == []
    assert _after(a, 0, delivered=True) == []  # not even a boundary: the turn was merged
    assert a.state().model_dump() == before
    assert _ledger(agent) == []
    copy = a.state().model_copy(deep=True)  # as a settle's state write would pass it
    assert (
        progress.merge(a, copy, turn=_turn(0), message={}, rounds=[], results={}, delivered=True)
        == []
    )
    assert copy.model_dump() == before


def test_a_delivered_result_closes_the_episode(agent):
    a = Agent(agent)
    _after(a, 0)
    (rec,) = _after(a, 1, delivered=True)
    assert rec["reason"] == "result" and rec["turns"]["count"] == 2
    assert _ledger(agent) == [rec]
    state = a.state()
    assert state.working_memory.active_episode_builder is None
    assert state.working_memory.active_episode_id is None
    assert state.working_memory.archived_episode_count == 1
    assert state.context.episodes_through == 190
    assert _finalized(agent) == [
        {"episode_id": rec["id"], "reason": "result", "turns": rec["turns"]}
    ]
    _after(a, 2)  # the next turn opens a new episode
    assert a.state().working_memory.active_episode_builder["first_turn_id"] == "turn_2"


def test_sleeping_closes_the_episode_with_reason_sleep(agent):
    a = Agent(agent)
    _after(a, 0)
    until = "2027-01-15T09:00:00.000Z"

    def sleep(s):
        s.status = AgentStatus.asleep
        s.sleeping_until = until

    a.update_state(sleep)
    (rec,) = _after(a, 1)
    assert rec["reason"] == "sleep" and rec["waiting"] == f"asleep until {until}"
    assert a.state().working_memory.current["waiting"] == f"asleep until {until}"
    assert a.state().working_memory.active_episode_builder is None


def test_waiting_on_tasks_closes_the_episode_with_reason_wait(agent):
    a = Agent(agent)

    def wait(s):
        s.status = AgentStatus.awaiting_task
        s.active_task_ids = ["task_1"]

    a.update_state(wait)
    (rec,) = _after(a, 0)
    assert rec["reason"] == "wait" and rec["waiting"] == "waiting for tasks: task_1"


def test_a_new_work_item_closes_the_episode_of_the_last_one(agent):
    a = Agent(agent)
    _after(a, 0, work_item_id="wi_1")
    _after(a, 1, work_item_id="wi_1")
    (rec,) = _after(a, 2, work_item_id="wi_2")
    assert rec["reason"] == "work_item_switch" and rec["work_item_id"] == "wi_1"
    assert rec["turns"]["count"] == 2
    builder = a.state().working_memory.active_episode_builder
    assert builder["work_item_id"] == "wi_2" and builder["turn_ids"] == ["turn_2"]
    # a switch and a delivery in the same turn: two episodes, in order
    recs = _after(a, 3, work_item_id="wi_3", delivered=True)
    assert [(r["reason"], r["work_item_id"]) for r in recs] == [
        ("work_item_switch", "wi_2"),
        ("result", "wi_3"),
    ]
    assert [r["id"] for r in _ledger(agent)] == [rec["id"]] + [r["id"] for r in recs]


def test_the_size_cap_closes_a_long_episode(agent):
    a = Agent(agent)
    for i in range(episodes.MAX_TURNS - 1):
        assert _after(a, i) == []
    (rec,) = _after(a, episodes.MAX_TURNS - 1)
    assert rec["reason"] == "size_cap" and rec["turns"]["count"] == episodes.MAX_TURNS


def test_a_turn_that_calls_sleep_ends_its_episode(agent, script):
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("wait for it"))
    tick(
        agent,
        model=script(
            {
                "text": "Resting.",
                "tool_calls": [{"name": "Sleep", "arguments": {"reason": "nothing to do"}}],
            },
            {"text": "Sleeping now."},
        ),
    )
    a = Agent(agent)
    assert a.state().status == AgentStatus.asleep
    (rec,) = _ledger(agent)
    assert rec["reason"] == "sleep" and rec["waiting"] == "asleep"
    assert rec["turns"]["count"] == 1 and rec["turns"]["first_index"] == 1  # as last_turn counts
    assert "wait for it" in rec["summary"] and "Sleeping now." in rec["summary"]
    (message,) = [e for e in jsonl.read(agent.transcript) if e["kind"] == "message"]
    assert rec["messages"]["first_id"] == message["message_id"]
    assert rec["transcript"] == {
        "start_offset": 0,
        "end_offset": agent.transcript.stat().st_size,
    }
    wm = a.state().working_memory
    assert wm.last_turn_id == message["turn_id"] and wm.active_episode_builder is None

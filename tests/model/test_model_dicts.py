"""holon.model.dicts: the TypedDicts name exactly the keys their builders write, so a key added to
a record without its type (or the other way round) fails here."""

from __future__ import annotations

from holon.agent import admission, timers, workitems
from holon.agent.handle import Agent
from holon.model import dicts
from holon.model.messages import MessageEnvelope
from holon.runtime.tick import tick
from holon.runtime.turn.state import begin
from holon.tasks import store
from holon.tasks.child import children


def _keys(typed) -> tuple[frozenset[str], frozenset[str]]:
    return typed.__required_keys__, typed.__required_keys__ | typed.__optional_keys__


def _fits(record: dict, typed) -> bool:
    required, every = _keys(typed)
    return required <= set(record) <= every


def _prompt(home, text: str) -> MessageEnvelope:
    env = admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))
    return MessageEnvelope.model_validate(env)


def test_task_records_have_the_typed_keys(agent):
    command = {"cmd": "true", "workdir": "/", "shell": "sh", "login": False, "tty": False}
    record = store.new_record("a", "task_1", command, parent_message_id=None, wrapper_pid=1)
    assert set(record) == _keys(dicts.CommandTaskRecord)[1]
    child = children.new_record(
        Agent(agent),
        "hello",
        child_id="c1",
        template="default",
        workspace_mode="shared",
        binding={},
        parent_message_id=None,
        turn_id=None,
    )
    assert set(child) == _keys(dicts.ChildTaskRecord)[1]
    assert _keys(dicts.TaskRecord)[1] == _keys(dicts.CommandTaskRecord)[1] & set(child)


def test_work_items_and_timers_have_the_typed_keys(agent):
    assert set(workitems.new_record("a", "ship it")) == _keys(dicts.WorkItem)[1]
    for schedule in ({"after": "10m"}, {"every": "1h"}, {"cron": "0 8 * * 1-5", "tz": "UTC"}):
        timer = timers.build(agent, text="wake", model_ref="openai/x", **schedule)
        assert _fits(timer, dicts.Timer), schedule


def test_an_inflight_turn_has_the_typed_keys(agent):
    a = Agent(agent)
    message = _prompt(agent, "go")
    begin(a, message)
    assert _fits(a.state().inflight[message.id], dicts.InflightTurn)


def test_closure_and_continuation_have_the_typed_keys(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", script({"text": "done"}))
    _prompt(agent, "go")
    tick(agent)
    state = Agent(agent).state()
    assert _fits(state.closure, dicts.Closure) and state.closure["runtime_posture"] == "awake"
    assert _fits(state.last_continuation, dicts.Continuation)
    assert set(dicts.StateView.__annotations__) <= set(type(state).model_fields)

"""holon.home.stateview: state.json as a plain dict, only when the full read would take it as it
is; and `holon status` built from it says exactly what it says from the validated state."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from enum import Enum

import pytest
from helpers import run, subprocess_env

from holon.agent import control
from holon.agent.handle import Agent
from holon.home import settings, stateview
from holon.home.init import init_home
from holon.model.conversation import TokenUsage
from holon.model.dicts import StateView
from holon.model.records import (
    SCHEMA_VERSION,
    AgentState,
    AgentStatus,
    ContextState,
    TokenUsageSummary,
    WorkingMemory,
)
from holon.ops import status
from holon.runtime.tick import tick


@pytest.fixture
def ran(script, monkeypatch):
    """Agent `a` after two turns (usage, a last turn, a brief, a transcript)."""
    usage = {"input_tokens": 12, "output_tokens": 3}
    monkeypatch.setenv(
        "HOLON_MODEL", script({"text": "one", "usage": usage}, {"text": "two", "usage": usage})
    )
    home = init_home(None, "a")
    from holon.agent.admission import admit, text_body

    for text in ("first", "second"):
        admit(home, "cli_prompt", "operator_prompt", text_body(text))
        tick(home)
    return home


def _edit(home, change) -> None:
    data = json.loads(home.state_json.read_text())
    change(data)
    home.state_json.write_text(json.dumps(data))


def _json_types(annotation) -> tuple[type, ...]:
    """The Python types a field of this annotation has in the model's JSON dump."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _json_types(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(t for arg in typing.get_args(annotation) for t in _json_types(arg))
    if annotation is type(None):
        return (type(None),)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return (str,)
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return (dict,)
    return (typing.get_origin(annotation) or annotation,)


def _derived(model, names) -> dict[str, tuple[type, ...]]:
    return {name: _json_types(model.model_fields[name].annotation) for name in names}


def test_the_view_is_derived_from_the_state_model():
    """Each part the light reader checks is a field of AgentState (or of its context, working
    memory and usage) with the type holon writes it as; and the StateView TypedDict names them."""
    assert stateview.SCHEMA_VERSION == SCHEMA_VERSION
    assert stateview.STATUSES == {s.value for s in AgentStatus}
    assert stateview.SHAPE == _derived(AgentState, stateview.SHAPE)
    assert list(StateView.__annotations__) == list(stateview.SHAPE)
    context = {k: (t,) for k, t in stateview._CONTEXT.items()}
    assert context == _derived(ContextState, stateview._CONTEXT)
    for part in ("last_request", "last_compaction"):  # checked optional dicts
        assert _derived(ContextState, [part]) == {part: (dict, type(None))}
    assert _derived(WorkingMemory, ["active_episode_builder"])["active_episode_builder"] == (
        dict,
        type(None),
    )
    for names, model in ((stateview._MEMORY, WorkingMemory), (stateview._COUNTS, AgentState)):
        assert set(_derived(model, names).values()) == {(int,)}
    assert set(_derived(TokenUsage, stateview._TOKENS).values()) == {(int,)}
    assert _derived(TokenUsageSummary, ["total", "total_model_rounds"]) == {
        "total": (dict,),
        "total_model_rounds": (int,),
    }


def test_a_current_state_reads_as_stored_and_summarises_as_the_full_read(ran):
    agent = Agent(ran)
    stored = stateview.current(ran)
    assert stored == json.loads(ran.state_json.read_text())
    full = agent.state().model_dump(mode="json")
    assert stored["token_usage"]["total"]["input_tokens"] > 0 and stored["last_turn"]
    assert status.summary_of(agent, stored) == status.summary_of(agent, full)
    assert status.agent_summary(ran) == status.summary_of(agent, full)


@pytest.mark.parametrize("change", ["pause", "stop"])
def test_lifecycle_states_summarise_alike(ran, change):
    getattr(control, change)(ran)
    agent = Agent(ran)
    stored = stateview.current(ran)
    assert stored is not None and stored["status"] in ("paused", "stopped")
    full = agent.state().model_dump(mode="json")
    summary = status.summary_of(agent, stored)
    assert summary == status.summary_of(agent, full) and summary["lifecycle_hint"]


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.update(status="sleepwalking"),
        lambda d: d.update(schema_version=2),
        lambda d: d.pop("token_usage"),
        lambda d: d.update(token_usage={"total": 3}),
        lambda d: d["token_usage"].pop("total_model_rounds"),
        lambda d: d["token_usage"]["total"].update(input_tokens=-5),
        lambda d: d.update(turn_index=-1),
        lambda d: d.update(turn_index=True),
        lambda d: d.update(active_task_ids=[1]),
        lambda d: d["context"].update(window_start="0"),
        lambda d: d["working_memory"].update(revision=None),
        lambda d: d.update(inflight={"m": 1}),
        lambda d: d.update(last_turn=[]),
    ],
    ids=[
        "status",
        "schema",
        "missing",
        "inner-type",
        "rounds",
        "tokens",
        "negative",
        "bool",
        "task-ids",
        "context",
        "memory",
        "inflight",
        "last-turn",
    ],
)
def test_a_state_the_full_read_would_not_take_as_is_goes_the_full_way(ran, corrupt):
    _edit(ran, corrupt)
    assert stateview.current(ran) is None
    corrupted = ran.state_json.read_bytes()
    shown = run("status", "a")  # the text rendering reads the summary's parts too
    assert shown.returncode == 0 and "tokens:" in shown.stdout, shown.stderr
    ran.state_json.write_bytes(corrupted)  # status may have rebuilt it
    summary = status.agent_summary(ran)  # the full read fills a default, or rebuilds
    agent = Agent(ran)
    assert summary == status.summary_of(agent, agent.state().model_dump(mode="json"))


def test_settings_changed_outside_holon_are_merged_by_the_full_read(ran):
    assert stateview.current(ran) is not None
    found = settings.read(ran) or {}
    settings.write(ran, {**found, "model_override": "scripted/elsewhere"})
    assert stateview.current(ran) is None
    assert status.agent_summary(ran)["model"]["override_model"] == "scripted/elsewhere"
    assert stateview.current(ran)["model_override"] == "scripted/elsewhere"


def test_a_rewound_transcript_is_not_current(ran):
    _edit(ran, lambda d: d["context"].update(window_start=10**9))
    assert stateview.current(ran) is None


def test_unreadable_or_missing_state_is_not_current(ran):
    ran.state_json.write_text("{not json")
    assert stateview.current(ran) is None
    ran.state_json.unlink()
    assert stateview.current(ran) is None


def test_status_json_loads_no_pydantic_for_a_current_state(ran):
    code = (
        "import sys\nfrom holon.cli.main import main\n"
        "try:\n    main(['status', 'a', '--json'])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('PYDANTIC:' + str('pydantic' in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert json.loads(proc.stdout)["agent_id"] == "a", proc.stderr
    assert proc.stderr.endswith("PYDANTIC:False"), proc.stderr

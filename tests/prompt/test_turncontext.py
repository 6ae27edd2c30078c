"""holon.prompt.turncontext: the turn-scoped context written once at the start of each turn."""

from __future__ import annotations

from scenario_helpers import T0, set_now

from holon.agent import triggers, workitems
from holon.agent.handle import Agent
from holon.model.records import AgentStatus
from holon.prompt import turncontext


def _text(a: Agent, tmp_path, **kw) -> str:
    kw.setdefault("execution_root", tmp_path / "root")
    kw.setdefault("cwd", tmp_path / "root" / "sub")
    kw.setdefault("memory_delta", [])
    kw.setdefault("revision", 0)
    return turncontext.text(a, **kw)


def test_time_status_and_directories(agent, tmp_path, monkeypatch):
    set_now(monkeypatch, T0)
    a = Agent(agent)
    assert _text(a, tmp_path).splitlines() == [
        "# Turn context",
        "Current time: 2027-01-15T08:00:00.000Z",
        "Status: awake_idle",
        f"Execution root: {tmp_path / 'root'}",
        f"Working directory: {tmp_path / 'root' / 'sub'}",
    ]
    a.update_state(lambda s: setattr(s, "status", AgentStatus.awake_running))
    set_now(monkeypatch, T0 + 60)
    lines = _text(a, tmp_path).splitlines()
    assert "Status: awake_running" in lines and "Current time: 2027-01-15T08:01:00.000Z" in lines


def test_the_working_memory_delta_has_its_own_section(agent, tmp_path):
    a = Agent(agent)
    text = _text(a, tmp_path, memory_delta=["- last result: old", "+ last result: new"], revision=4)
    assert text.endswith(
        "\n\n## Working memory (revision 4), changes since you last saw it\n"
        "- last result: old\n+ last result: new"
    )
    assert "## Working memory" not in _text(a, tmp_path, revision=4)  # no changes: no section


def test_the_work_queue_follows_the_delta(agent, tmp_path):
    a = Agent(agent)
    assert "# Work queue" not in _text(a, tmp_path)
    workitems.append(a, workitems.new_record("a", "Ship it"))
    text = _text(a, tmp_path, memory_delta=["+ open work item: x"], revision=1)
    assert "# Work queue" in text and "Ship it" in text
    assert text.index("## Working memory") < text.index("# Work queue")


def test_an_active_trigger_is_named_but_its_token_never_appears(agent, tmp_path):
    a = Agent(agent)
    descriptor, token = triggers.rotate(agent)
    text = _text(a, tmp_path)
    line = f"External trigger: {descriptor['external_trigger_id']} active (wake_hint)"
    assert line in text
    assert "never repeat or store it" in text
    assert token not in text
    triggers.revoke(agent)
    assert "External trigger" not in _text(a, tmp_path)

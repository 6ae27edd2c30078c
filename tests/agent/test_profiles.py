"""Profile presets (holon.agent.profiles): the table, the cheap agent.json reader, and a preset
that is not one (corrupt_state, never the wider profile)."""

from __future__ import annotations

import json

import pytest

from holon.agent import profiles
from holon.errors import HolonError
from holon.tools.catalog import BUILTINS

WITHHELD = {"UseWorkspace", "DetachWorkspace"}  # its NotifyOperator goes to its parent


def _set_identity(home, **fields):
    ident = json.loads(home.agent_json.read_text())
    ident.update(fields)
    home.agent_json.write_text(json.dumps(ident))


def test_public_named_gets_every_tool_and_plugins():
    names = [*BUILTINS, "SpawnAgent", "AgentGet", *WITHHELD, "SomePlugin"]
    assert profiles.allowed("public_named", names) == names


def test_private_child_gets_the_built_ins_but_the_withheld_ones():
    assert profiles.allows("private_child", "ExecCommand")
    assert profiles.allows("private_child", "SpawnAgent")  # bounded by the delegation depth
    assert profiles.allows("private_child", "AgentGet")
    for name in WITHHELD:
        assert not profiles.allows("private_child", name)
    assert not profiles.allows("private_child", "SomePlugin")  # plugins fail closed
    assert profiles.allowed("private_child", ["UseWorkspace", "Sleep", "X"]) == ["Sleep"]


def test_every_built_in_tool_is_decided_for_a_child():
    """A built-in tool added to the catalog must be placed: allowed or withheld, never by
    accident refused (or offered) to a child."""
    undecided = set(BUILTINS) - profiles.PRIVATE_CHILD_TOOLS - set(profiles.CHILD_WITHHELD)
    assert not undecided
    assert not profiles.PRIVATE_CHILD_TOOLS & set(profiles.CHILD_WITHHELD)


def test_an_unknown_preset_allows_nothing():
    assert not profiles.allows("root_admin", "ExecCommand")
    assert profiles.allowed("root_admin", list(BUILTINS)) == []


def test_refusal_hint_says_why():
    assert "parent" in profiles.refusal_hint("private_child", "UseWorkspace")
    assert "private_child" in profiles.refusal_hint("private_child", "SomePlugin")


def test_preset_of_reads_agent_json(agent):
    assert profiles.preset_of(agent) == "public_named"
    _set_identity(agent, visibility="private", profile_preset="private_child")
    assert profiles.preset_of(agent) == "private_child"


@pytest.mark.parametrize(
    "fields, preset",
    [
        ({"visibility": "private"}, "private_child"),
        ({"kind": "child"}, "private_child"),
        ({"visibility": "public", "kind": "named"}, "public_named"),
    ],
)
def test_a_home_without_a_preset_gets_the_one_init_would_give(agent, fields, preset):
    ident = json.loads(agent.agent_json.read_text())
    del ident["profile_preset"]
    agent.agent_json.write_text(json.dumps({**ident, **fields}))
    assert profiles.preset_of(agent) == preset


@pytest.mark.parametrize("bad", ["root_admin", 3, None, ["public_named"], ""])
def test_a_corrupt_preset_is_corrupt_state(agent, bad):
    ident = json.loads(agent.agent_json.read_text())
    agent.agent_json.write_text(json.dumps({**ident, "profile_preset": bad}))
    if bad is None:  # an explicit null is a missing field: the public agent's own default
        assert profiles.preset_of(agent) == "public_named"
        return
    with pytest.raises(HolonError) as exc:
        profiles.preset_of(agent)
    assert exc.value.kind == "corrupt_state"
    assert str(agent.agent_json) in exc.value.message and "profile_preset" in exc.value.message
    assert exc.value.hint


def test_a_corrupt_agent_json_is_corrupt_state(agent):
    agent.agent_json.write_text("{not json")
    with pytest.raises(HolonError) as exc:
        profiles.preset_of(agent)
    assert exc.value.kind == "corrupt_state"

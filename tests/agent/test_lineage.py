"""holon.agent.lineage: who binds an agent another agent created; a line in spawned.jsonl binds
only a home that names its creator; a hand-made loop of lineage ends."""

from __future__ import annotations

import json

from holon.agent import lineage
from holon.home.init import init_home


def test_chain_depth_root_and_spawned(tmp_path):
    root = init_home(None, "r")
    pub = init_home(None, "pub", parent_agent_id="r", lineage=lineage.new_public_lineage(root))
    lineage.record_spawn(root, "pub", pub.root)
    child = init_home(str(pub.children_dir / "pub.c-1"), "pub.c-1", kind="child")
    assert [h.agent_id for h in lineage.ancestors(child)] == ["pub", "r"]
    assert lineage.depth(child) == 2 and lineage.root_of(child).agent_id == "r"
    assert [h.agent_id for h in lineage.spawned(root)] == ["pub"]
    # a line naming a home this agent did not create binds nothing
    other = init_home(None, "other")
    lineage.record_spawn(root, "other", other.root)
    assert [h.agent_id for h in lineage.spawned(root)] == ["pub"]
    assert lineage.live_spawned(root, {"other": str(other.root)}) == []


def test_a_loop_of_lineage_ends(tmp_path):
    a = init_home(None, "a")
    b = init_home(None, "b", parent_agent_id="a", lineage=lineage.new_public_lineage(a))
    ident = json.loads(a.agent_json.read_text())
    a.agent_json.write_text(json.dumps({**ident, "lineage_parent_home": str(b.root)}))
    assert [h.agent_id for h in lineage.ancestors(b)] == ["a"]
    assert lineage.depth(a) == 1

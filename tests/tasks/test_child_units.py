"""Units of private-child delegation: labels, ids, depth, the tasks a closure waits on, the
projection of a child whose home is gone, and a child's end converging to archived."""

from __future__ import annotations

import shutil

from sandbox_marks import needs_landlock

from holon.agent.handle import Agent
from holon.home import registry
from holon.home.init import init_home
from holon.home.layout import Home
from holon.tasks import store, tracking
from holon.tasks.child import childend, children, childview, childws


def test_label_is_the_first_line_bounded():
    assert children.label_of("\n  Fix the build  \nthen more") == "Fix the build"
    assert len(children.label_of("x" * 500)) <= children.LABEL_CHARS
    assert children.label_of("   \n") == "child agent"


def test_child_ids_fit_the_agent_id_rule():
    assert children.new_child_id("main").startswith("main.c-")
    long_id = children.new_child_id("a" * 64)
    assert long_id.startswith("c-") and len(long_id) <= 64


def test_depth_and_parent_follow_the_layout():
    parent = init_home(None, "p")
    rec = children.spawn(Agent(parent), "one")
    child = Home(rec["child_home"])
    assert children.depth(parent) == 0 and children.depth(child) == 1
    assert children.parent_of(child).root == parent.root
    assert rec["workspace"]["workspace_id"] == childws.PARENT_HOME
    # a child's supervision task is listed, but a turn does not wait on it
    assert Agent(parent).state().active_task_ids == [rec["id"]]
    assert tracking.awaited(parent, [rec["id"], "task_other"]) == ["task_other"]


def test_projection_of_a_missing_child_and_the_parent_side_repair():
    parent = init_home(None, "p")
    rec = children.spawn(Agent(parent), "one")
    shutil.rmtree(rec["child_home"])
    assert childview.projection(rec)["child_status"] == "missing"
    assert childend.reconcile(Agent(parent)) == [rec["id"]]
    done = store.load(parent, rec["id"])
    assert done["status"] == "failed" and done["failure_artifact"]["kind"] == "child_missing"
    assert done["result_message_id"]


def test_a_child_whose_task_ended_converges_to_archived():
    parent = init_home(None, "p")
    rec = children.spawn(Agent(parent), "one")
    child = Agent(Home(rec["child_home"], rec["child_agent_id"]))
    childend.finish(Agent(parent), store.load(parent, rec["id"]), "cancelled")
    childend.after_settle(child)
    assert child.identity()["archived_at"]
    assert rec["child_agent_id"] in registry.archived()
    assert rec["child_agent_id"] not in registry.load()


@needs_landlock
def test_a_childs_commands_cannot_write_its_parents_state(tmp_path):
    """A private child's home lies in its parent's `.holon/`, and an inheriting child works in the
    parent's home: its commands write that home and its own memory, never the parent's `.holon/`
    nor its own."""
    from holon.runtime.turn.context import tool_context
    from holon.tools import registry as tools

    parent = init_home(None, "p")
    rec = children.spawn(Agent(parent), "look around")
    child = Home(rec["child_home"], rec["child_agent_id"])
    cmd = (
        f"echo x > {parent.dot}/evil; echo x > {child.dot}/evil; "
        f"echo y >> {child.memory}/self.md && echo own-memory; echo z > made.txt && echo workspace"
    )
    out = tools.call(tool_context(Agent(child)), "ExecCommand", {"cmd": cmd, "login": False})
    stdout = out.envelope["result"]["stdout_preview"]
    assert "own-memory" in stdout and "workspace" in stdout
    assert not (parent.dot / "evil").exists() and not (child.dot / "evil").exists()
    assert out.envelope["result"]["stderr_preview"].count("Read-only file system") == 2


def test_apply_patch_in_a_child_writes_its_own_memory_not_its_parents_state():
    from holon.runtime.turn.context import tool_context
    from holon.tools import registry as tools

    parent = init_home(None, "p")
    rec = children.spawn(Agent(parent), "take notes")
    child = Home(rec["child_home"], rec["child_agent_id"])
    ctx = tool_context(Agent(child))
    mem = child.memory / "self.md"
    patch = f"--- {mem}\n+++ {mem}\n@@ -1 +1,2 @@\n # Self\n+a note\n"
    out = tools.call(ctx, "ApplyPatch", {"patch": patch})
    assert out.envelope["status"] == "success", out.envelope
    assert mem.read_text().startswith("# Self\na note\n")
    for target in (parent.dot / "evil.json", child.dot / "evil.json"):
        bad = f"--- /dev/null\n+++ {target}\n@@ -0,0 +1 @@\n+x\n"
        out = tools.call(ctx, "ApplyPatch", {"patch": bad})
        assert out.envelope["status"] == "error" and not target.exists(), target

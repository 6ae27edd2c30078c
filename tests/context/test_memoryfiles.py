"""holon.context.memoryfiles: the prefix's copy of the memory files, and the edits since."""

from __future__ import annotations

from holon.context import memoryfiles
from holon.model.records import ContextState


def test_edits_are_shown_once_against_what_the_model_saw(agent):
    (agent.memory / "self.md").write_text("I am careful.\n")
    (agent.memory / "operator.md").write_text("")
    ctx = ContextState()
    memoryfiles.rebased(ctx, memoryfiles.current(agent))
    assert ctx.memory_basis == {"self": "I am careful."}
    assert memoryfiles.prefix_files(agent, ctx) == [
        ("self", str(agent.memory / "self.md"), "I am careful.")
    ]
    assert memoryfiles.edits(agent, ctx) == ([], ctx.memory_shown)  # nothing changed

    (agent.memory / "operator.md").write_text("Ada runs me.\n")
    (agent.memory / "self.md").unlink()
    lines, shown = memoryfiles.edits(agent, ctx)
    assert lines == [
        "",
        "## Agent memory: self (memory/self.md) was edited: it is now empty or gone",
        "",
        "## Agent memory: operator (memory/operator.md) was edited; it now reads (this "
        "replaces the copy above):",
        "",
        "Ada runs me.",
    ]
    # the settle of that turn: the model has now seen them; the prefix keeps its copy
    memoryfiles.settled(ctx, {"data": {"memory_shown": shown, "compression_epoch": 0}})
    assert memoryfiles.edits(agent, ctx) == ([], shown)
    assert ctx.memory_basis == {"self": "I am careful."}


def test_a_compaction_since_the_turn_context_wins(agent):
    (agent.memory / "self.md").unlink()
    ctx = ContextState()
    memoryfiles.rebased(ctx, {})
    (agent.memory / "operator.md").write_text("v1\n")
    _, shown_v1 = memoryfiles.edits(agent, ctx)
    (agent.memory / "operator.md").write_text("v2\n")
    ctx.compression_epoch = 1
    memoryfiles.rebased(ctx, memoryfiles.current(agent))  # the compaction took v2
    memoryfiles.settled(ctx, {"data": {"memory_shown": shown_v1, "compression_epoch": 0}})
    assert ctx.memory_shown == memoryfiles.digests({"operator": "v2"})
    assert memoryfiles.prefix_files(agent, ContextState()) is None  # no basis: the files as is

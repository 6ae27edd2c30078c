"""holon.memory.sources: the documents each source becomes, and the refs that name them."""

from __future__ import annotations

import pytest

from holon.memory import sources


def test_memory_file_sections_concatenate_back_to_the_exact_file():
    text = (
        "# Self\nintro\n\n## Keys\n"
        + "k" * 50
        + "\n"
        + ("long line " * 30 + "\n") * 30
        + "## Keys\nsecond section with the same heading\n"
        + "x" * 9000
        + "\n"
    )
    docs = sources.file_docs("memory/self.md", text, "T", kind="memory_file")
    assert "".join(d.body for d in docs) == text
    assert all(len(d.body) <= sources.CHUNK_CHARS for d in docs)
    keys = [d.key for d in docs]
    assert len(set(keys)) == len(keys)
    assert keys[:2] == ["memory/self.md#Self#0", "memory/self.md#Keys#0"]
    assert all(d.scope_kind == "agent" and d.workspace_id is None for d in docs)
    lines = text.splitlines()
    for d in docs:
        first, last = d.metadata["line_start"], d.metadata["line_end"]
        assert d.body.splitlines()[0] in lines[first - 1]
        assert d.body.splitlines()[-1] in lines[last - 1]


def test_empty_sections_are_not_documents():
    assert sources.file_docs("memory/operator.md", "\n\n", "T", kind="memory_file") == []


@pytest.mark.parametrize(
    "args, title, body_start",
    [
        ({"cmd": "make test", "workdir": "src"}, "make test", "$ make test\n(in src)"),
        (
            {"commands": [{"cmd": "git status"}, {"cmd": "git diff"}]},
            "git status; git diff",
            "$ git status\n$ git diff",
        ),
        (
            {"patch": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n"},
            "app.py",
            "--- a/app.py",
        ),
        ({"message": "deploy finished"}, '{"message": "deploy finished"}', '{"message"'),
    ],
)
def test_tool_executions_keep_the_command_and_a_bounded_outcome(args, title, body_start):
    call = {"name": "Tool", "arguments": args, "turn_id": "t1", "key": "0:c1", "call_id": "c1"}
    out = "\n".join(f"line {i}" for i in range(5000))
    result = {
        "created_at": "T2",
        "data": {
            "envelope": {
                "status": "success",
                "summary_text": "done",
                "result": {"exit_status": 2, "stdout_preview": out, "stderr_preview": "boom"},
            }
        },
    }
    doc = sources.tool_doc(call, result, "ledger", "agent_home")
    assert doc.title == f"Tool: {title}" and doc.body.startswith(body_start)
    assert "line 0" in doc.body and "line 4999" in doc.body and "line 2500" not in doc.body
    assert "--- stderr ---\nboom" in doc.body
    assert doc.metadata["exit_status"] == 2 and doc.updated_at == "T2"
    assert len(doc.body) < 5000


def test_searches_and_reads_are_not_tool_memory():
    for name in ("MemorySearch", "MemoryGet", "TaskOutput", "Sleep"):
        assert sources.tool_doc({"name": name, "arguments": {}}, None, "l", "w") is None


def test_refs_are_opaque_and_differ_by_agent_and_origin():
    a = sources.source_ref("a", "briefs", "brf_1")
    assert a.startswith("mem_") and "brf" not in a and len(a) == 28
    assert a != sources.source_ref("b", "briefs", "brf_1")
    assert a != sources.source_ref("a", "episodes", "brf_1")
    assert a == sources.source_ref("a", "briefs", "brf_1")


def test_long_bodies_keep_their_head_and_say_so():
    doc = sources.brief_doc({"id": "b", "text": "y" * 60_000, "created_at": "T"}, "l")
    assert len(doc.body) == sources.MAX_BODY and doc.metadata["body_truncated"] is True

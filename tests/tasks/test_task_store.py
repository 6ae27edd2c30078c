"""Task records and markers on disk: identity digests, load/save, markers, scratch dirs and
exit-status files."""

from __future__ import annotations

import os
import stat

import pytest

from holon.tasks import store

CMD = {"cmd": "make", "cmd_digest": "sha256:x", "accepts_input": False}


def record(home, task_id, *, created_at=None, status="running", digest="sha256:x"):
    rec = store.new_record(
        home.agent_id,
        task_id,
        {**CMD, "cmd_digest": digest},
        parent_message_id=None,
        wrapper_pid=123,
    )
    rec["status"] = status
    home.task_dir(task_id).mkdir(parents=True, exist_ok=True)  # save() writes into an existing dir
    if created_at:
        rec["created_at"] = created_at
    store.save(home, rec)
    return rec


def test_cmd_digest_is_the_command_identity():
    base = store.cmd_digest("make", "/w", "/bin/sh", False, False)
    assert base.startswith("sha256:") and len(base) == 7 + 64
    assert base == store.cmd_digest("make", "/w", "/bin/sh", 0, None)  # truthiness, not type
    variants = [
        ("make ", "/w", "/bin/sh", False, False),
        ("make", "/w2", "/bin/sh", False, False),
        ("make", "/w", "/bin/bash", False, False),
        ("make", "/w", "/bin/sh", True, False),
        ("make", "/w", "/bin/sh", False, True),
    ]
    digests = {store.cmd_digest(*v) for v in variants}
    assert len(digests) == len(variants) and base not in digests
    # no separator ambiguity: fields are JSON-encoded, not concatenated
    assert store.cmd_digest("a", "b c", "s", False, False) != store.cmd_digest(
        "a b", "c", "s", False, False
    )


def test_new_record_shape():
    rec = store.new_record(
        "a",
        "task_1",
        {"cmd": "echo   hi\nthere"},
        parent_message_id="m",
        wrapper_pid=42,
        supervisor_pid=43,
    )
    assert (rec["id"], rec["agent_id"], rec["kind"], rec["status"]) == (
        "task_1",
        "a",
        "command_task",
        "running",
    )
    assert rec["summary"] == "command: echo hi there"
    assert (rec["pid"], rec["supervisor_pid"], rec["parent_message_id"]) == (42, 43, "m")
    assert rec["created_at"] == rec["started_at"] == rec["updated_at"]
    assert all(
        rec[k] is None
        for k in ("finished_at", "exit_status", "signal", "failure_artifact", "result_message_id")
    )


def test_preview_collapses_whitespace_and_cuts():
    assert store.preview("a \t b\n\nc") == "a b c"
    long = "x" * 100
    assert store.preview(long) == "x" * 79 + "…" and len(store.preview(long)) == 80
    assert store.preview("x" * 80) == "x" * 80
    assert store.preview(long, limit=10) == "x" * 9 + "…"


def test_save_and_load_round_trip(agent):
    rec = record(agent, "task_1")
    loaded = store.load(agent, "task_1")
    assert loaded == rec and loaded["updated_at"]
    assert (agent.task_dir("task_1") / "task.json").is_file()


@pytest.mark.parametrize("task_id", ["", "../task_1", "a/b", ".", ".hidden", "task_none"])
def test_load_refuses_path_like_or_unknown_ids(agent, task_id):
    record(agent, "task_1")
    assert store.load(agent, task_id) is None


def test_markers(agent):
    assert store.active_ids(agent) == [] and store.read_marker(agent, "task_1") == 0
    store.set_active(agent, "task_2", 222)
    store.set_active(agent, "task_1", 111)
    assert (agent.tasks_active / "task_1").read_text() == "111\n"
    (agent.tasks_active / ".task_3.tmp").write_text("1\n")
    assert store.active_ids(agent) == ["task_1", "task_2"]
    assert store.read_marker(agent, "task_1") == 111
    (agent.tasks_active / "task_bad").write_text("not a pid\n")
    (agent.tasks_active / "task_empty").write_text("")
    assert store.read_marker(agent, "task_bad") == 0 and store.read_marker(agent, "task_empty") == 0
    store.clear_active(agent, "task_1")
    store.clear_active(agent, "task_1")  # idempotent
    assert "task_1" not in store.active_ids(agent)


def test_all_records_sorted_by_creation_and_skips_noise(agent):
    assert store.all_records(agent) == []
    record(agent, "task_b", created_at="2024-01-02T00:00:00.000Z")
    record(agent, "task_a", created_at="2024-01-03T00:00:00.000Z")
    record(agent, "task_c", created_at="2024-01-01T00:00:00.000Z")
    store.set_active(agent, "task_a", 1)
    (agent.tasks / "stray.txt").write_text("x")
    (agent.tasks / "task_empty").mkdir()
    assert [r["id"] for r in store.all_records(agent)] == ["task_c", "task_b", "task_a"]


def test_find_running_needs_marker_status_and_digest(agent):
    record(agent, "task_1", digest="sha256:a")
    assert store.find_running(agent, "sha256:a") is None  # no active marker
    store.set_active(agent, "task_1", 1)
    assert store.find_running(agent, "sha256:a")["id"] == "task_1"
    assert store.find_running(agent, "sha256:b") is None
    record(agent, "task_1", digest="sha256:a", status="completed")
    assert store.find_running(agent, "sha256:a") is None
    store.set_active(agent, "task_gone", 1)  # a marker without a record
    assert store.find_running(agent, "sha256:a") is None


@pytest.mark.parametrize(
    "content,expected",
    [
        (None, None),
        (b"", None),
        (b"3", None),
        (b"3\n", 3),
        (b"0\n", 0),
        (b" 137 \n", 137),
        (b"x\n", None),
        (b"\xff\n", None),
    ],
)
@pytest.mark.parametrize("where", ["scratch", "task"])
def test_read_exit_status(agent, where, content, expected):
    """The exit file is read from the scratch dir, or from the task dir of an older task."""
    tdir = agent.task_dir("task_1")
    tdir.mkdir(parents=True)
    directory = store.make_scratch(agent, "task_1") if where == "scratch" else tdir
    if content is not None:
        (directory / "exit_status").write_bytes(content)
    assert store.read_exit_status(agent, "task_1") == expected


def test_read_exit_status_without_any_directory(agent):
    assert store.read_exit_status(agent, "task_none") is None


def test_read_exit_status_prefers_the_scratch_dir(agent):
    tdir = agent.task_dir("task_1")
    tdir.mkdir(parents=True)
    (tdir / "exit_status").write_text("4\n")
    scratch = store.make_scratch(agent, "task_1")
    assert store.read_exit_status(agent, "task_1") == 4  # an empty scratch dir: the task dir
    (scratch / "exit_status").write_text("2\n")
    assert store.read_exit_status(agent, "task_1") == 2
    (scratch / "exit_status").write_text("2")  # not finished yet: not the task dir's either
    assert store.read_exit_status(agent, "task_1") is None
    store.remove_scratch(agent, "task_1")
    assert store.read_exit_status(agent, "task_1") == 4


def test_read_exit_status_skips_an_unreadable_scratch_file(agent):
    tdir = agent.task_dir("task_1")
    tdir.mkdir(parents=True)
    (tdir / "exit_status").write_text("6\n")
    (store.make_scratch(agent, "task_1") / "exit_status").write_bytes(b"\xff\n")
    assert store.read_exit_status(agent, "task_1") == 6
    agent.scratch_dir("task_2").parent.mkdir(parents=True, exist_ok=True)
    agent.scratch_dir("task_2").write_text("a file, not a directory")
    assert store.read_exit_status(agent, "task_2") is None


def test_make_scratch_is_private_and_new(agent):
    path = store.make_scratch(agent, "task_1")
    assert path == agent.scratch_dir("task_1") == agent.dot / "scratch" / "task_1"
    assert path.is_dir() and list(path.iterdir()) == []
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert stat.S_IMODE(agent.scratch.stat().st_mode) == 0o700
    other = store.make_scratch(agent, "task_2")
    assert stat.S_IMODE(other.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):  # a task's scratch dir is never reused
        store.make_scratch(agent, "task_1")


def test_remove_scratch(agent):
    path = store.make_scratch(agent, "task_1")
    (path / "exit_status").write_text("0\n")
    (path / "sub").mkdir()
    (path / "sub" / "tmpfile").write_text("x")
    keep = store.make_scratch(agent, "task_2")
    store.remove_scratch(agent, "task_1")
    assert not path.exists() and keep.is_dir() and agent.scratch.is_dir()
    store.remove_scratch(agent, "task_1")  # idempotent
    store.remove_scratch(agent, "task_never")
    assert store.read_exit_status(agent, "task_1") is None


def test_group_alive():
    assert store.group_alive(os.getpgid(0)) is True
    assert store.group_alive(2**22 + 12345) is False
    assert store.TERMINAL == ("completed", "failed", "cancelled", "interrupted")

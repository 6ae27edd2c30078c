"""holon.memory.index: what is indexed from each source, incremental catch-up, hand edits, and an
index that is missing, corrupt, foreign, stale or half-written."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading

import pytest

from holon.agent.handle import Agent
from holon.home.init import init_home
from holon.home.layout import Home
from holon.memory import catchup, files, index, ranking, schema
from holon.store import jsonl

T = "2026-05-01T10:00:00.000Z"


@pytest.fixture
def home() -> Home:
    return init_home(None, "mem")


def _entry(kind: str, turn: str, data: dict, n: int = 0) -> dict:
    return {
        "schema_version": 1,
        "id": f"tr_{turn}_{kind}_{n}",
        "agent_id": "mem",
        "created_at": T,
        "kind": kind,
        "turn_id": turn,
        "message_id": f"msg_{turn}",
        "data": data,
    }


def _brief(home: Home, i: int, text: str, workspace: str = "agent_home", when: str = T) -> None:
    rec = {"id": f"brf_{i}", "agent_id": "mem", "kind": "result", "created_at": when}
    jsonl.append(home.briefs, {**rec, "text": text, "workspace_id": workspace})


def _command(home: Home, turn: str, cmd: str, stdout: str, *, split: bool = False) -> None:
    key = "0:call_1"
    call = _entry(
        "tool_call",
        turn,
        {"key": key, "call_id": "call_1", "name": "ExecCommand", "arguments": {"cmd": cmd}},
    )
    envelope = {
        "tool_name": "ExecCommand",
        "status": "success",
        "summary_text": "command completed: exit 0",
        "result": {"exit_status": 0, "stdout_preview": stdout, "stderr_preview": ""},
        "error": None,
    }
    result = _entry(
        "tool_result",
        turn,
        {"key": key, "call_id": "call_1", "tool_name": "ExecCommand", "envelope": envelope},
    )
    jsonl.append(home.transcript, call)
    if split:
        index.status(home)  # a catch-up between the call and its result
    jsonl.append(home.transcript, result)
    jsonl.append(home.transcript, _entry("turn_terminal", turn, {"kind": "completed"}))


def _refs(doc: dict) -> list[str]:
    return [r["source_ref"] for r in doc["results"]]


def _one(home: Home, query: str, **kw) -> dict:
    found = index.search(home, query, **kw)["results"]
    assert len(found) == 1, found
    return found[0]


def test_every_source_is_indexed_with_its_provenance(home):
    (home.memory / "self.md").write_text("# Self\n\n## Keys\nThe deploy key is in vault.\n")
    _brief(home, 1, "Rotated the TLS certificate for api.example.org.")
    jsonl.append(
        home.context_episodes,
        {
            "id": "ep_1",
            "created_at": T,
            "workspace_id": "agent_home",
            "turns": {"first_index": 1, "last_index": 3},
            "summary": "Investigated the flaky integration suite.",
            "decisions": ["pin the postgres image"],
            "commands": [{"cmd": "make itest", "exit": 1}],
        },
    )
    home.plan_path("wi_1").parent.mkdir(parents=True)
    home.plan_path("wi_1").write_text("1. bisect the regression in parser\n")
    jsonl.append(
        home.work_items,
        {
            "id": "wi_1",
            "objective": "Fix the parser",
            "state": "open",
            "plan_status": "ready",
            "todo_list": [{"text": "write a failing test", "state": "pending"}],
            "workspace_id": "agent_home",
            "updated_at": T,
        },
    )
    jsonl.append(
        home.transcript,
        _entry(
            "message",
            "t1",
            {"message_kind": "operator_prompt", "text": "The staging password rotates on Fridays."},
        ),
    )
    _command(home, "t1", "cargo build --release", "error[E0432]: unresolved import `serde_json`")
    home.workspace_json.write_text(json.dumps({"workspace_id": "agent_home", "note": "monorepo"}))

    kinds = {
        "vault": ("memory_file", "memory/self.md", "agent"),
        "certificate": ("brief", ".holon/ledger/briefs.jsonl", "workspace"),
        "postgres": ("episode", ".holon/ledger/context_episodes.jsonl", "workspace"),
        "bisect": ("work_item", ".holon/ledger/work_items.jsonl", "workspace"),
        "Fridays": ("message", ".holon/ledger/transcript.jsonl", "workspace"),
        "serde_json": ("tool_execution", ".holon/ledger/transcript.jsonl", "workspace"),
        "monorepo": ("workspace", ".holon/workspace.json", "workspace"),
    }
    for word, (kind, path, scope) in kinds.items():
        r = _one(home, word)
        assert (r["kind"], r["source_path"], r["scope_kind"]) == (kind, path, scope), word
        assert r["agent_id"] == "mem" and r["source_ref"].startswith("mem_")
        assert word.lower() in r["snippet"].lower()
        assert set(r) >= {"title", "score", "updated_at", "metadata", "workspace_id"}
    assert _one(home, "vault")["metadata"] == {"line_start": 3, "line_end": 4}
    tool = _one(home, "cargo")
    assert tool["title"] == "ExecCommand: cargo build --release"
    assert tool["metadata"]["exit_status"] == 0
    got = index.get(home, tool["source_ref"])
    assert got["content"].startswith("$ cargo build --release\n") and "E0432" in got["content"]


def test_a_new_brief_is_found_by_the_next_search_without_a_rebuild(home):
    for i in range(50):
        _brief(home, i, f"routine report number {i}")
    first = index.search(home, "routine", limit=50)
    ids = _row_ids(home)
    _brief(home, 99, "the quarterly OSPREY audit passed")
    home.mark_memory_dirty()
    assert _one(home, "osprey")["metadata"]["brief_id"] == "brf_99"
    assert not home.memory_dirty.exists()  # the marker is cleared once the index caught up
    assert _row_ids(home) - ids == {max(_row_ids(home))}  # one row added, none rewritten
    assert len(index.search(home, "routine", limit=50)["results"]) == len(first["results"])


def _row_ids(home: Home) -> set[int]:
    with sqlite3.connect(home.memory_index) as db:
        return {r[0] for r in db.execute("SELECT id FROM docs")}


def test_hand_edits_of_memory_files_are_caught_even_with_the_same_size_and_mtime(home):
    assert "memory/self.md" in files.ALWAYS_HASHED  # hashed on every search
    path = home.memory / "self.md"
    path.write_text("# Self\ncodename HERON\n")
    assert _one(home, "heron")
    st = path.stat()
    path.write_text("# Self\ncodename EGRET\n")  # same length
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index.search(home, "heron")["results"] == []
    assert _one(home, "egret")["kind"] == "memory_file"
    path.unlink()
    assert index.search(home, "egret")["results"] == []


def test_other_memory_files_and_open_plans_are_followed(home):
    (home.memory / "projects.md").write_text("# Projects\nthe KESTREL migration\n")
    assert _one(home, "kestrel")["source_path"] == "memory/projects.md"
    home.plan_path("wi_1").parent.mkdir(parents=True)
    home.plan_path("wi_1").write_text("draft\n")
    rec = {"id": "wi_1", "objective": "Ship it", "state": "open", "workspace_id": "agent_home"}
    jsonl.append(home.work_items, rec)
    assert index.search(home, "bisect")["results"] == []
    home.plan_path("wi_1").write_text("draft, then bisect the failure\n")
    assert _one(home, "bisect")["kind"] == "work_item"
    jsonl.append(home.work_items, {**rec, "state": "completed", "result_summary": "shipped"})
    assert _one(home, "shipped")["metadata"]["state"] == "completed"
    assert len(index.search(home, "ship")["results"]) <= 1  # the latest record replaced the first


def test_a_tool_call_and_its_result_meet_across_catch_ups(home):
    _command(home, "t7", "make deploy ENV=prod", "deployed build 4512", split=True)
    r = _one(home, "4512")
    assert r["title"] == "ExecCommand: make deploy ENV=prod"
    assert _one(home, "deploy")["source_ref"] == r["source_ref"]


def test_a_torn_last_line_is_indexed_once_it_is_complete(home):
    line = json.dumps({"id": "brf_t", "kind": "result", "created_at": T, "text": "torn PELICAN"})
    with open(home.briefs, "ab") as f:
        f.write(line[:30].encode())
    assert index.search(home, "pelican")["results"] == []
    with open(home.briefs, "ab") as f:
        f.write(line[30:].encode() + b"\n")
    assert _one(home, "pelican")


def test_a_replaced_ledger_is_read_again_from_the_start(home):
    _brief(home, 1, "old ALBATROSS entry")
    assert _one(home, "albatross")
    home.briefs.write_text(
        json.dumps({"id": "brf_2", "created_at": T, "text": "new CORMORANT entry, longer"}) + "\n"
    )
    assert index.search(home, "albatross")["results"] == []
    assert _one(home, "cormorant")


@pytest.mark.parametrize(
    "damage", ["delete", "garbage", "truncate", "zero_pages", "old_schema", "foreign"]
)
def test_a_damaged_index_is_rebuilt_with_the_same_results(home, damage):
    for i in range(200):
        _brief(home, i, f"entry {i} about the {'FALCON' if i % 7 == 0 else 'sparrow'} project")
    (home.memory / "self.md").write_text("# Self\nFALCON is my codename\n")
    before = index.search(home, "falcon", limit=50)
    path = home.memory_index
    size = path.stat().st_size
    if damage == "delete":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(os.urandom(size))
    elif damage == "truncate":
        with open(path, "r+b") as f:
            f.truncate(size // 3)
    elif damage == "zero_pages":
        with open(path, "r+b") as f:
            f.seek(4096)
            f.write(b"\0" * (size - 8192))
    elif damage == "old_schema":
        with sqlite3.connect(path) as db:
            db.execute(f"PRAGMA user_version = {schema.SCHEMA - 1}")
    elif damage == "foreign":
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = 'someone-else' WHERE key = 'agent_id'")
    after = index.search(home, "falcon", limit=50)
    assert _refs(after) == _refs(before) and len(_refs(after)) == 30
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_crash_in_the_middle_of_catch_up_repeats_nothing_and_loses_nothing(home, monkeypatch):
    for i in range(300):
        _brief(home, i, f"note {i} " + "padding " * 40)
    monkeypatch.setattr(catchup, "CHUNK_BYTES", 16 * 1024)
    real = catchup.Ledger.records
    calls = {"n": 0}

    def dying(self, w, recs):
        if self.name == "briefs":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt  # the process is killed mid-chunk
        return real(self, w, recs)

    monkeypatch.setattr(catchup.Ledger, "records", dying)
    with pytest.raises(KeyboardInterrupt):
        index.search(home, "note")
    monkeypatch.setattr(catchup.Ledger, "records", real)
    assert index.status(home)["by_kind"] == {"brief": 300, "memory_file": 2}
    with sqlite3.connect(home.memory_index) as db:
        assert db.execute("SELECT count(*) FROM fts").fetchone()[0] == 302


def test_concurrent_searches_index_each_record_once(home):
    for i in range(400):
        _brief(home, i, f"parallel record {i} " + "words " * 30)
    errors: list[BaseException] = []

    def go() -> None:
        try:
            index.search(home, "parallel")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert index.status(home)["by_kind"]["brief"] == 400


def test_search_answers_from_a_stale_index_when_it_cannot_be_written(home, monkeypatch):
    _brief(home, 1, "the HERON report")
    assert _one(home, "heron")
    _brief(home, 2, "the HERON follow-up")

    def full(*a, **k):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(catchup, "catch_up_ledger", full)
    doc = index.search(home, "heron")
    assert doc["stale"] is True and len(doc["results"]) == 1
    monkeypatch.undo()
    doc = index.search(home, "heron")
    assert "stale" not in doc and len(doc["results"]) == 2


def test_search_is_scoped_to_the_active_workspace_plus_agent_memory(home):
    (home.memory / "self.md").write_text("# Self\nIBIS agent-wide fact\n")
    _brief(home, 1, "IBIS in the home workspace")
    _brief(home, 2, "IBIS in the project workspace", workspace="proj")
    kinds = {(r["kind"], r["workspace_id"]) for r in index.search(home, "ibis")["results"]}
    assert kinds == {("memory_file", None), ("brief", "agent_home")}
    Agent(home).update_state(lambda s: setattr(s, "active_workspace_id", "proj"))
    kinds = {(r["kind"], r["workspace_id"]) for r in index.search(home, "ibis")["results"]}
    assert kinds == {("memory_file", None), ("brief", "proj")}
    assert len(index.search(home, "ibis", include_all_workspaces=True)["results"]) == 3


def test_ranking_prefers_the_title_then_the_newer_record(home):
    _brief(home, 1, "Heron\nmigration notes", when="2026-01-01T00:00:00.000Z")
    _brief(
        home,
        2,
        "Unrelated\nthe heron migration is mentioned in passing among many other words",
        when="2026-02-01T00:00:00.000Z",
    )
    _brief(home, 3, "Heron\nmigration notes", when="2026-03-01T00:00:00.000Z")
    ids = [r["metadata"]["brief_id"] for r in index.search(home, "heron")["results"]]
    assert ids == ["brf_3", "brf_1", "brf_2"]
    assert index.search(home, "heron zzz")["match"] == "any"


def test_get_returns_the_exact_body_within_bounds(home):
    text = "第一行：机器学习模型\n" + "数据" * 10_000 + "\nend"
    _brief(home, 1, text)
    ref = _one(home, "学习")["source_ref"]
    full = index.get(home, ref, max_chars=50_000)
    assert full["content"] == text and full["truncated"] is False
    assert full["total_chars"] == len(text)
    short = index.get(home, ref)
    assert short["content"] == text[:12_000] and short["truncated"] is True
    assert index.get(home, ref, max_chars=5)["content"] == text[:5]
    for bad in (0, 50_001):
        with pytest.raises(index.InvalidInput):
            index.get(home, ref, max_chars=bad)
    for ref in ("mem_000000000000000000000000", "memory/self.md", "../.holon/state.json", ""):
        with pytest.raises(index.SourceNotFound) as err:
            index.get(home, ref)
        assert err.value.kind == "memory_source_not_found" and err.value.hint


def test_source_refs_are_stable_across_rebuilds(home):
    _brief(home, 1, "stable STORK record")
    ref = _one(home, "stork")["source_ref"]
    index.rebuild(home)
    assert index.get(home, ref)["content"] == "stable STORK record"


def test_an_index_that_cannot_be_created_is_a_clear_error(home):
    home.indexes.rmdir()
    home.indexes.write_text("a file where the directory should be\n")
    with pytest.raises(index.IndexUnavailable) as err:
        index.search(home, "anything")
    assert err.value.kind == "memory_index_unavailable" and err.value.hint
    with pytest.raises(index.IndexUnavailable):
        index.rebuild(home)


def test_malformed_and_hostile_records_never_stop_the_rest(home, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "plan.md").write_text("TOPSECRET outside the home\n")
    with open(home.briefs, "a") as f:
        f.write('{"id": "b2", "text": "lone \\ud800 surrogate", "created_at": "T"}\n')
        f.write('{"id": "b3", "text": "nul \\u0000 inside", "created_at": "T"}\n')
        f.write('{"id": "b4", "text": 5}\n[1, 2]\n"text"\n{"id": ["x"], "text": "x"}\n')
    jsonl.append(home.context_episodes, {"id": "e1", "turns": [1], "decisions": [None, 3]})
    hostile = os.path.relpath(secret, home.work_items_dir)
    jsonl.append(home.work_items, {"id": hostile, "objective": "reach out", "state": "open"})
    jsonl.append(home.transcript, _entry("message", "t1", {"text": {"not": "text"}}))
    jsonl.append(home.transcript, _entry("tool_result", "t1", {"key": 5, "envelope": []}))
    for kind, data in [
        ("assistant_round", {"tool_calls": 7}),
        ("turn_context", {"workspace_id": "ws\ud800"}),
        ("tool_call", {"key": "0:x", "name": "ExecCommand", "arguments": {"cmd": "a\udc80"}}),
    ]:
        with open(home.transcript, "a") as f:
            f.write(json.dumps(_entry(kind, "t1", data)) + "\n")  # escapes, as a hand edit may
    with open(home.transcript, "a") as f:
        f.write('{"kind": "message", "data": "not an object"}\n')
        f.write('{"kind": "tool_result", "data": 3}\n')
    jsonl.append(home.transcript, _entry("message", "t2", {"text": "transcript SURVIVES"}))
    _brief(home, 9, "the FINAL good record")
    assert _one(home, "final")
    assert _one(home, "survives", include_all_workspaces=True)["kind"] == "message"
    assert "\ufffd" in _one(home, "surrogate")["title"]
    assert _one(home, "inside")["kind"] == "brief"
    assert index.search(home, "topsecret")["results"] == []  # an id never becomes a path
    assert _one(home, "reach")["kind"] == "work_item"
    assert index.search(home, "\ud800 surrogate")["results"]  # a query with a lone surrogate


def test_an_unselective_query_ranks_the_newest_matches(home, monkeypatch):
    monkeypatch.setattr(ranking, "RANKED_MATCHES", 5)
    _brief(home, 0, "Common\ncommon common common: the oldest and best match")
    for i in range(1, 11):
        _brief(home, i, f"record {i} mentions common once among other words")
    ids = [r["metadata"]["brief_id"] for r in index.search(home, "common", limit=3)["results"]]
    assert len(ids) == 3 and "brf_0" not in ids and set(ids) <= {f"brf_{i}" for i in range(6, 11)}
    for i in range(11, 21):
        _brief(home, i, f"project record {i} says common", workspace="proj")
    found = index.search(home, "common", limit=20)["results"]  # too few in scope: all are ranked
    assert len(found) == 11 and found[0]["metadata"]["brief_id"] == "brf_0"

"""holon.context.episodes: the open builder, its boundaries, finalized records and the ledger."""

from __future__ import annotations

from scenario_helpers import T0, set_now

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.context import episodes
from holon.store import jsonl


def _turn(i: int, **kw) -> dict:
    return {
        "turn_id": f"turn_{i}",
        "turn_index": i,
        "message_id": f"msg_{i}",
        "offset": 1000 * i,
        "end": 1000 * i + 900,
        "work_item_id": "wi_1",
        "workspace_id": "agent_home",
        "outcome": "completed",
        **kw,
    }


def _ev(**kw) -> dict:
    return {
        "asked": "do it",
        "kind": "operator_prompt",
        "replied": "",
        "commands": [],
        "files": [],
        "verification": [],
        **kw,
    }


def test_merge_is_idempotent_per_turn():
    builder = episodes.open_builder(_turn(3))
    assert builder["id"].startswith("ep_")
    assert (builder["first_turn_index"], builder["start_offset"], builder["turns"]) == (3, 3000, 0)
    ev = _ev(files=["a.py"], commands=[{"cmd": "make", "exit": 0}], replied="built", decided=True)
    episodes.merge(builder, _turn(3), ev)
    snapshot = {k: (list(v) if isinstance(v, list) else v) for k, v in builder.items()}
    episodes.merge(builder, _turn(3), ev)  # a settle repeated after a crash
    assert builder == snapshot
    assert builder["turns"] == 1 and builder["turn_ids"] == ["turn_3"]
    assert builder["lines"] == [
        "turn 3 — operator_prompt: do it — ran `make` → exit 0 — changed a.py — replied: built"
    ]
    episodes.merge(builder, _turn(4, outcome="failed"), _ev(asked="", files=["a.py", "b.py"]))
    assert builder["turns"] == 2 and builder["end_offset"] == 4900
    assert builder["lines"][-1] == "turn 4 — changed a.py, b.py — the turn failed"
    assert builder["files"] == ["a.py", "b.py"]
    assert builder["decisions"] == ["turn 3: built"]


def test_boundary_reasons():
    builder = episodes.open_builder(_turn(0))
    episodes.merge(builder, _turn(0), _ev())
    assert episodes.boundary(builder, delivered=False, waiting=None) is None
    assert episodes.boundary(builder, delivered=True, waiting="asleep") == "result"
    assert episodes.boundary(builder, delivered=False, waiting="asleep") == "sleep"
    assert episodes.boundary(builder, delivered=False, waiting="asleep until 2027") == "sleep"
    assert episodes.boundary(builder, delivered=False, waiting="waiting for tasks: t") == "wait"
    for i in range(1, episodes.MAX_TURNS):
        assert episodes.boundary(builder, delivered=False, waiting=None) is None
        episodes.merge(builder, _turn(i), _ev())
    assert builder["turns"] == episodes.MAX_TURNS
    assert episodes.boundary(builder, delivered=False, waiting=None) == "size_cap"
    # a few very long turns reach the cap too
    wordy = episodes.open_builder(_turn(0))
    for i in range(3):
        episodes.merge(wordy, _turn(i), _ev(asked="", replied="r" * 3 * episodes.SUMMARY_CHARS))
    assert episodes.boundary(wordy, delivered=False, waiting=None) == "size_cap"


def test_finalize_record_fields(monkeypatch):
    set_now(monkeypatch, T0)
    builder = episodes.open_builder(_turn(5))
    episodes.merge(
        builder,
        _turn(5),
        _ev(
            files=["src/a.py"],
            commands=[{"cmd": "pytest -q", "exit": 1}],
            verification=[{"cmd": "pytest -q", "exit": 1}],
            replied="tests fail",
        ),
    )
    episodes.merge(
        builder,
        _turn(6),
        _ev(
            asked="fix it",
            files=["src/b.py"],
            commands=[{"cmd": "pytest -q", "exit": 0}],
            verification=[{"cmd": "pytest -q", "exit": 0}],
            replied="fixed",
            decided=True,
        ),
    )
    rec = episodes.finalize(
        builder, agent_id="a", reason="result", carry_forward=["open: wi_2 x"], waiting=None
    )
    assert rec["schema_version"] == 1 and rec["id"] == builder["id"]
    assert (rec["agent_id"], rec["reason"], rec["created_at"]) == (
        "a",
        "result",
        "2027-01-15T08:00:00.000Z",
    )
    assert (rec["workspace_id"], rec["work_item_id"]) == ("agent_home", "wi_1")
    assert rec["turns"] == {
        "first_index": 5,
        "last_index": 6,
        "count": 2,
        "first_turn_id": "turn_5",
        "last_turn_id": "turn_6",
    }
    assert rec["messages"] == {"first_id": "msg_5", "last_id": "msg_6", "count": 2}
    assert rec["transcript"] == {"start_offset": 5000, "end_offset": 6900}
    assert rec["files"] == ["src/a.py", "src/b.py"]
    assert [c["exit"] for c in rec["commands"]] == [1, 0]
    assert [c["exit"] for c in rec["verification"]] == [1, 0]
    assert rec["decisions"] == ["turn 6: fixed"]  # a routine report is not a decision
    assert rec["carry_forward"] == ["open: wi_2 x"] and rec["waiting"] is None
    assert rec["summary_source"] == "deterministic"
    assert rec["summary"].splitlines() == [
        "turn 5 — operator_prompt: do it — ran `pytest -q` → exit 1 — changed src/a.py — "
        "replied: tests fail",
        "turn 6 — operator_prompt: fix it — ran `pytest -q` → exit 0 — changed src/b.py — "
        "replied: fixed",
        "files: src/a.py, src/b.py",
        "verified: `pytest -q` → exit 1; `pytest -q` → exit 0",
    ]
    again = episodes.finalize(
        builder, agent_id="a", reason="result", carry_forward=["open: wi_2 x"], waiting=None
    )
    assert again == rec  # deterministic


def test_an_empty_builder_finalizes_to_its_first_turn():
    builder = episodes.open_builder(_turn(2))
    rec = episodes.finalize(
        builder, agent_id="a", reason="compaction", carry_forward=[], waiting="asleep"
    )
    assert rec["turns"]["first_index"] == rec["turns"]["last_index"] == 2
    assert rec["transcript"] == {"start_offset": 2000, "end_offset": 2000}
    assert rec["waiting"] == "asleep" and rec["summary"] == ""


def test_a_long_summary_is_bounded():
    builder = episodes.open_builder(_turn(0))
    for i in range(episodes.MAX_TURNS):
        episodes.merge(
            builder,
            _turn(i),
            _ev(
                asked=f"ask-{chr(97 + i)} " + "words " * 60 + f"END-{chr(97 + i)}",
                replied=f"reply-{chr(97 + i)} " + "more " * 50,
                files=[f"dir/file_{i}.py"],
                verification=[{"cmd": f"pytest t{i}", "exit": 0}],
            ),
        )
    full = "\n".join(builder["lines"])
    assert len(full) > episodes.SUMMARY_CHARS
    summary = episodes.finalize(
        builder, agent_id="a", reason="size_cap", carry_forward=[], waiting=None
    )["summary"]
    assert len(summary) <= episodes.SUMMARY_CHARS
    lines = summary.splitlines()
    assert lines[0].startswith("turn 0 — operator_prompt: ask-a")
    assert any(line.startswith(f"turn {episodes.MAX_TURNS - 1} ") for line in lines)
    assert "END-a" in lines[0]  # what was asked keeps its end; the reply gives way first


def test_routine_turns_are_grouped_and_a_fact_among_them_stays_whole():
    builder = episodes.open_builder(_turn(0))
    fact = "Remember that the pager rotates on Thursdays."
    for i in range(episodes.MAX_TURNS):
        asked = f"Turn {i}: run the check." + (f" {fact}" if i == 4 else "")
        cmd = {"cmd": "make check", "exit": 0}
        episodes.merge(builder, _turn(i), _ev(asked=asked, commands=[cmd], replied=f"Turn {i} ok."))
    lines = episodes.summary(builder).splitlines()
    routine = (
        "operator_prompt: Turn 0: run the check. — ran `make check` → exit 0 — replied: Turn 0 ok."
    )
    assert lines == [
        f"turns 0–11 ×11 — {routine}",
        f"turn 4 — operator_prompt: Turn 4: run the check. {fact} — ran `make check` → exit 0 — "
        "replied: Turn 4 ok.",
    ]


def test_append_skips_a_repeated_last_record(tmp_path):
    path = tmp_path / "context_episodes.jsonl"
    first = {"id": "ep_1", "summary": "one"}
    episodes.append(path, first)
    episodes.append(path, first)  # a settle repeated after a crash
    assert [r["id"] for r in jsonl.read(path)] == ["ep_1"]
    episodes.append(path, {"id": "ep_2", "summary": "two"})
    episodes.append(path, {"id": "ep_2", "summary": "two"})
    assert [r["id"] for r in jsonl.read(path)] == ["ep_1", "ep_2"]


def _rec(i: int, end: int, summary: str = "s") -> dict:
    return {
        "id": f"ep_{i}",
        "summary": summary,
        "transcript": {"start_offset": end - 100, "end_offset": end},
    }


def test_recent_keeps_episodes_that_cover_a_folded_turn(tmp_path):
    """An episode is shown once any of its turns left the window (it begins before the window
    start), even when its later turns are still in the conversation."""
    path = tmp_path / "context_episodes.jsonl"
    assert episodes.recent(path, 10_000) == []
    for rec in [_rec(1, 100), _rec(2, 200), _rec(3, 300, summary=""), _rec(4, 400), _rec(5, 500)]:
        jsonl.append(path, rec)
    jsonl.append(path, {"id": "ep_bad", "summary": "x", "transcript": {"start_offset": "0"}})
    assert [r["id"] for r in episodes.recent(path, 400)] == ["ep_1", "ep_2", "ep_4"]
    assert [r["id"] for r in episodes.recent(path, 350)] == ["ep_1", "ep_2", "ep_4"]
    assert [r["id"] for r in episodes.recent(path, 300)] == ["ep_1", "ep_2"]
    assert [r["id"] for r in episodes.recent(path, 1)] == ["ep_1"]
    assert episodes.recent(path, 0) == []


def test_recent_reads_a_bounded_tail(tmp_path):
    path = tmp_path / "context_episodes.jsonl"
    jsonl.append_many(path, [_rec(i, i) for i in range(episodes.TAIL_SCAN + 10)])
    found = episodes.recent(path, 10_000)
    assert len(found) == episodes.TAIL_SCAN
    assert found[0]["id"] == "ep_10" and found[-1]["id"] == f"ep_{episodes.TAIL_SCAN + 9}"


def test_heading_names_the_span_and_the_work_item():
    rec = {
        "id": "ep_1",
        "created_at": "2027-01-15T08:00:00.000Z",
        "turns": {"first_index": 3, "last_index": 7},
        "work_item_id": "wi_9",
    }
    assert episodes.heading(rec) == "## Episode ep_1 · turns 3–7 · 2027-01-15T08:00 · work wi_9"
    rec.update(turns={"first_index": 4, "last_index": 4}, work_item_id=None)
    assert episodes.heading(rec) == "## Episode ep_1 · turn 4 · 2027-01-15T08:00"


def test_a_bounded_summary_keeps_what_was_verified():
    builder = episodes.open_builder(_turn(0))
    for i in range(episodes.MAX_TURNS):
        episodes.merge(
            builder,
            _turn(i),
            _ev(
                asked=f"ask-{chr(97 + i)} " + "words " * 60 + f"END-{chr(97 + i)}",
                replied=f"reply-{chr(97 + i)} " + "more " * 50,
                files=[f"dir/file_{i}.py"],
                verification=[{"cmd": f"pytest t{i}", "exit": 0}],
            ),
        )
    summary = episodes.summary(builder)
    assert len(summary) <= episodes.SUMMARY_CHARS
    assert summary.splitlines()[-1] == (
        "verified: `pytest t9` → exit 0; `pytest t10` → exit 0; `pytest t11` → exit 0"
    )


def test_carry_forward_names_every_open_work_item_with_its_open_todos(agent):
    a = Agent(agent)

    def item(objective: str, *todos: tuple[str, str], state: str = "open") -> str:
        todo_list = [{"text": t, "state": st} for t, st in todos]
        rec = {**workitems.new_record(a.id, objective, todo_list=todo_list), "state": state}
        return workitems.append(a, rec)["id"]

    other = item("Migrate the database", ("write the migration", "pending"), ("done", "completed"))
    active = item("Ship the release", ("tag v1", "in_progress"))
    item("Old work", ("never shown", "pending"), state="completed")
    many = item("Many todos", *[(f"step {i}", "pending") for i in range(episodes.OPEN_TODOS + 2)])
    current = {"active_work": {"id": active, "objective": "Ship the release"}}
    out = episodes.carry_forward(agent, current)
    assert out[:2] == [f"continue {active}: Ship the release", f"todo ({active}): tag v1"]
    assert out[2:4] == [
        f"open: {other} Migrate the database",
        f"todo ({other}): write the migration",
    ]
    assert f"todo ({many}): step {episodes.OPEN_TODOS - 1}" in out
    assert out[-1] == f"todo ({many}): … 2 more"
    assert not any("never shown" in line or "done" in line.split(": ")[-1] for line in out)
    assert episodes.carry_forward(agent, {})[0] == f"open: {other} Migrate the database"

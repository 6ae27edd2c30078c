"""holon.context.workingmemory: the working-memory record, its rendering, delta and revision,
and the agent's memory files."""

from __future__ import annotations

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.context import workingmemory
from holon.model.records import AgentState, AgentStatus, WorkingMemory


def _item(a: Agent, objective: str, **fields) -> dict:
    return workitems.append(a, {**workitems.new_record(a.id, objective), **fields})


def _ev(**kw) -> dict:
    return {"files": [], "commands": [], "verification": [], "replied": "", **kw}


def test_derive_reads_work_items_evidence_and_waiting(agent):
    a = Agent(agent)
    active = _item(
        a,
        "Ship the release",
        plan_status="ready",
        todo_list=[
            {"text": "draft notes", "state": "completed"},
            {"text": "tag v1", "state": "pending"},
            {"text": "publish", "state": "in_progress"},
        ],
    )
    other = _item(a, "Answer the vendor")
    _item(a, "Old and done", state="completed")
    a.update_state(lambda s: setattr(s, "current_work_item_id", active["id"]))
    a.update_state(lambda s: setattr(s, "active_task_ids", ["task_1"]))
    ev = _ev(
        files=["src/a.py"],
        commands=[{"cmd": "pytest -q", "exit": 0}],
        verification=[{"cmd": "pytest -q", "exit": 0}],
        replied="Tagged it.",
    )
    current = workingmemory.derive(a, a.state(), ev)
    assert current == {
        "active_work": {
            "id": active["id"],
            "objective": "Ship the release",
            "plan_status": "ready",
            "open_todos": ["tag v1", "publish"],
        },
        "open_work_items": [f"{other['id']} Answer the vendor"],
        "more_open_work_items": 0,
        "last_result": "Tagged it.",
        "files": ["src/a.py"],
        "commands": [{"cmd": "pytest -q", "exit": 0}],
        "verification": [{"cmd": "pytest -q", "exit": 0}],
        "waiting": None,
        "tasks": ["task_1"],
    }
    assert workingmemory.derive(a, a.state(), ev) == current  # deterministic


def test_derive_advances_the_previous_record_within_bounds(agent):
    a = Agent(agent)
    state = AgentState(id="a")
    state.working_memory.current = {
        "files": [f"f{i}" for i in range(workingmemory.RECENT_FILES)],
        "commands": [{"cmd": f"c{i}", "exit": 0} for i in range(workingmemory.RECENT_COMMANDS)],
        "verification": [],
        "last_result": "earlier result",
    }
    ev = _ev(files=["f0", "new"], commands=[{"cmd": "latest", "exit": 1}])
    current = workingmemory.derive(a, state, ev)
    # a file touched again moves to the end; the oldest fall off
    assert (
        current["files"][-2:] == ["f0", "new"]
        and len(current["files"]) == workingmemory.RECENT_FILES
    )
    assert "f1" not in current["files"] and "f2" in current["files"]
    assert len(current["commands"]) == workingmemory.RECENT_COMMANDS
    assert current["commands"][-1] == {"cmd": "latest", "exit": 1}
    assert current["commands"][0]["cmd"] == "c1"
    assert current["last_result"] == "earlier result"  # no reply this turn: the last one stays
    assert current["active_work"] is None and current["open_work_items"] == []


def test_more_open_work_items_are_counted(agent):
    a = Agent(agent)
    for i in range(workingmemory.OPEN_WORK + 3):
        _item(a, f"job {i}")
    current = workingmemory.derive(a, a.state(), _ev())
    assert len(current["open_work_items"]) == workingmemory.OPEN_WORK
    assert current["more_open_work_items"] == 3
    assert "more open work items: 3" in workingmemory.render(current)


def test_waiting_follows_the_status():
    state = AgentState(id="a")
    assert workingmemory.waiting(state) is None
    state.status = AgentStatus.asleep
    assert workingmemory.waiting(state) == "asleep"
    state.sleeping_until = "2027-01-15T09:00:00.000Z"
    assert workingmemory.waiting(state) == "asleep until 2027-01-15T09:00:00.000Z"
    state.status = AgentStatus.awaiting_task
    state.active_task_ids = ["task_1", "task_2"]
    assert workingmemory.waiting(state) == "waiting for tasks: task_1, task_2"


def _record(**kw) -> dict:
    return {
        "active_work": None,
        "open_work_items": [],
        "more_open_work_items": 0,
        "last_result": "",
        "files": [],
        "commands": [],
        "verification": [],
        "waiting": None,
        "tasks": [],
        **kw,
    }


def test_render_is_one_fact_per_line():
    current = _record(
        active_work={
            "id": "wi_1",
            "objective": "Ship it",
            "plan_status": "ready",
            "open_todos": ["tag", "publish"],
        },
        open_work_items=["wi_2 Other job"],
        last_result="Tagged.",
        files=["a.py", "b.py"],
        commands=[{"cmd": "make", "exit": 0}],
        verification=[{"cmd": "pytest", "exit": 1}],
        waiting="asleep",
        tasks=["task_1"],
    )
    assert workingmemory.render(current) == [
        "active work: wi_1 [ready] Ship it",
        "open todo: tag",
        "open todo: publish",
        "open work item: wi_2 Other job",
        "last result: Tagged.",
        "files touched recently: a.py, b.py",
        "command: `make` → exit 0",
        "verification: `pytest` → exit 1",
        "waiting: asleep",
        "active tasks: task_1",
    ]
    assert workingmemory.render({}) == ["active work: none"]
    assert workingmemory.render(_record()) == ["active work: none"]


def test_delta_lists_dropped_then_added_lines_and_is_bounded():
    assert workingmemory.delta(["a", "b", "c"], ["b", "d"]) == ["- a", "- c", "+ d"]
    assert workingmemory.delta(["a"], ["a"]) == []
    big = workingmemory.delta([], [f"line {i}" for i in range(workingmemory.DELTA_LINES + 7)])
    assert len(big) == workingmemory.DELTA_LINES + 1
    assert big[-1] == "… 7 more changes"


def test_the_revision_moves_only_when_the_rendering_changes():
    wm = WorkingMemory()
    first = _record(last_result="one")
    workingmemory.advance(wm, first)
    assert wm.revision == 1 and wm.current == first
    assert wm.pending_delta == ["+ active work: none", "+ last result: one"]
    # the same rendering (a field that is not shown, or the same values): same revision
    workingmemory.advance(wm, {**first, "unrendered": 1})
    assert wm.revision == 1
    workingmemory.advance(wm, _record(last_result="two"))
    assert wm.revision == 2
    assert wm.pending_delta == ["+ active work: none", "+ last result: two"]  # vs last prompted
    # an empty first record still gets a revision
    empty = WorkingMemory()
    workingmemory.advance(empty, {})
    assert empty.revision == 1


def test_mark_prompted_hands_over_the_delta_once():
    wm = WorkingMemory()
    workingmemory.advance(wm, _record(last_result="one"))
    lines = workingmemory.mark_prompted(wm)
    assert lines == ["+ active work: none", "+ last result: one"]
    assert wm.last_prompted == ["active work: none", "last result: one"]
    assert wm.last_prompted_revision == 1 and wm.pending_delta == []
    assert workingmemory.mark_prompted(wm) == []  # nothing changed since
    workingmemory.advance(wm, _record(last_result="two"))
    assert wm.pending_delta == ["- last result: one", "+ last result: two"]
    assert workingmemory.mark_prompted(wm) == ["- last result: one", "+ last result: two"]
    assert wm.last_prompted_revision == 2


def test_memory_files_are_bounded_and_skip_empty_or_missing(agent):
    # a fresh home has both files with a heading
    assert [(n, p) for n, p, _ in workingmemory.memory_files(agent)] == [
        ("self", str(agent.memory / "self.md")),
        ("operator", str(agent.memory / "operator.md")),
    ]
    (agent.memory / "self.md").write_text("   \n\n")
    (agent.memory / "operator.md").unlink()
    assert workingmemory.memory_files(agent) == []
    (agent.memory / "operator.md").mkdir()  # not a file
    assert workingmemory.memory_files(agent) == []
    big = "x" * (workingmemory.MEMORY_FILE_CHARS + 123)
    (agent.memory / "self.md").write_text(f"\n{big}\n")
    ((name, path, text),) = workingmemory.memory_files(agent)
    assert name == "self" and path == str(agent.memory / "self.md")
    assert text == (
        "x" * workingmemory.MEMORY_FILE_CHARS
        + "\n[… 123 more characters in memory/self.md not shown; read the file]"
    )
    exact = "y" * workingmemory.MEMORY_FILE_CHARS
    (agent.memory / "self.md").write_text(exact)
    assert workingmemory.memory_files(agent)[0][2] == exact

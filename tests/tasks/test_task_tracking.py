"""AgentState.active_task_ids kept true: add and remove at task transitions, reconcile after a
crash (records decide; a tty command still reported inline is not a task yet)."""

from __future__ import annotations

from holon.agent.handle import Agent
from holon.tasks import results, store, tracking


def make(home, task_id, **extra):
    rec = store.new_record(
        home.agent_id, task_id, {"cmd": "x"}, parent_message_id=None, wrapper_pid=1
    )
    rec.update(extra)
    home.task_dir(task_id).mkdir(parents=True)
    store.save(home, rec)
    return rec


def ids(home):
    return Agent(home).state().active_task_ids


def test_add_and_remove_are_idempotent(agent):
    tracking.add(Agent(agent), "task_1")
    tracking.add(Agent(agent), "task_1")
    tracking.add(Agent(agent), "task_2")
    assert ids(agent) == ["task_1", "task_2"]
    tracking.remove(Agent(agent), "task_1")
    tracking.remove(Agent(agent), "task_1")
    assert ids(agent) == ["task_2"]


def test_reconcile_follows_the_records(agent):
    make(agent, "task_run")  # running, its add was lost in a crash
    store.set_active(agent, "task_run", 1)
    make(agent, "task_tty", promoted=False)  # a tty command its starter may still report
    store.set_active(agent, "task_tty", 1)
    done = make(agent, "task_done")
    results.finish(Agent(agent), done, "completed", exit_status=0)
    tracking.add(Agent(agent), "task_done")  # a crash after the record, before the removal
    tracking.add(Agent(agent), "task_gone")  # no record at all
    assert tracking.reconcile(Agent(agent)) == ["task_run"]
    assert ids(agent) == ["task_run"]
    assert tracking.reconcile(Agent(agent)) == ["task_run"]  # stable


def test_finish_removes_before_the_result_is_admitted(agent):
    rec = make(agent, "task_1")
    tracking.add(Agent(agent), "task_1")
    results.finish(Agent(agent), rec, "failed", exit_status=2)
    assert ids(agent) == []
    assert store.load(agent, "task_1")["result_message_id"]

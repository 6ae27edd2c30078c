"""`holon work list|show|create`: the control-plane enqueue of work items, their views, and bad
input that leaves the work-item ledger untouched."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok, ok_json, usage_error

from holon.cli.work import work_cmd
from holon.store import jsonl

VIEW_KEYS = {
    "id",
    "agent_id",
    "objective",
    "state",
    "plan_status",
    "readiness",
    "created_at",
    "updated_at",
}


def ledger(agent) -> list[dict]:
    return list(jsonl.read(agent.work_items))


def test_create_json_with_a_plan(agent):
    rec = ok_json(
        work_cmd, "create", "a", "  ship the release  ", "--plan", "1. tag\n2. push", "--json"
    )
    assert VIEW_KEYS <= set(rec)
    assert rec["id"].startswith("wi_") and rec["objective"] == "ship the release"
    assert rec["state"] == "open" and rec["readiness"] == "queued_runnable"
    assert rec["plan_artifact"]["preview"] == "1. tag\n2. push\n"
    assert agent.plan_path(rec["id"]).read_text() == "1. tag\n2. push\n"
    assert [r["id"] for r in ledger(agent)] == [rec["id"]]
    events = [e for e in jsonl.read(agent.events) if e["kind"] == "work_item_enqueued"]
    assert events[0]["data"]["via"] == "control_plane"
    assert list(jsonl.read(agent.transcript)) == []  # no message, no transcript entry


def test_create_plain_prints_the_id_and_reads_the_plan_from_stdin(agent):
    wid = ok(work_cmd, "create", "a", "write docs", "--plan", "-", input="from stdin").stdout
    wid = wid.strip()
    assert wid.startswith("wi_") and agent.plan_path(wid).read_text() == "from stdin\n"


def test_list_and_show(agent):
    assert ok_json(work_cmd, "list", "a", "--json") == []
    first = ok_json(work_cmd, "create", "a", "first", "--json")
    second = ok_json(work_cmd, "create", "a", "second", "--json")
    rows = ok_json(work_cmd, "list", "a", "--json")
    assert [r["id"] for r in rows] == [first["id"], second["id"]]
    lines = ok(work_cmd, "list", "a").stdout.splitlines()
    assert lines[0].startswith(f"{first['id']}  queued_runnable") and lines[0].endswith("first")
    shown = ok_json(work_cmd, "show", "a", second["id"])
    assert shown["id"] == second["id"] and shown["objective"] == "second"
    assert ok_json(work_cmd, "list", "a", "--all", "--json") == rows


def test_completed_items_are_listed_only_with_all(agent):
    from holon.agent import workitems
    from holon.agent.handle import Agent

    done = ok_json(work_cmd, "create", "a", "done already", "--json")
    todo = ok_json(work_cmd, "create", "a", "still to do", "--json")
    workitems.append(Agent(agent), {**workitems.get(agent, done["id"]), "state": "completed"})
    assert [r["id"] for r in ok_json(work_cmd, "list", "a", "--json")] == [todo["id"]]
    rows = ok_json(work_cmd, "list", "a", "--all", "--json")
    assert [(r["id"], r["state"]) for r in rows] == [
        (done["id"], "completed"),
        (todo["id"], "open"),
    ]


def test_create_activates_an_idle_agent(agent):
    from holon.agent.due import due_reasons

    assert due_reasons(agent) == []
    ok(work_cmd, "create", "a", "something to do")
    assert due_reasons(agent)


@pytest.mark.parametrize("objective", ["", "   "])
def test_empty_objective_writes_nothing(agent, objective):
    fails("work", "create", "a", objective, code=2, kind="invalid_objective")
    assert ledger(agent) == []
    assert not agent.work_items_dir.exists() or not any(agent.work_items_dir.iterdir())


def test_unknown_item_and_agent(agent):
    _, err = fails("work", "show", "a", "wi_nope", code=2, kind="unknown_work_item")
    assert "holon work list a --all" in err
    fails("work", "list", "nobody", code=2, kind="unknown_agent")
    fails("work", "create", "nobody", "x", code=2, kind="unknown_agent")
    usage_error(work_cmd, "create", "a")
    assert ledger(agent) == []


def test_close_and_cancel_end_an_item_with_the_note_as_its_report(agent):
    from helpers import run

    def create(objective: str) -> str:
        r = run("work", "create", "a", objective)
        assert r.returncode == 0, r.stderr
        return r.stdout.split()[0]

    done, dropped = create("ship it"), create("maybe later")
    r = run("work", "close", "a", done, "--note", "shipped in 1.2")
    assert (r.returncode, r.stdout) == (0, f"{done}: closed by the operator: shipped in 1.2\n")
    r = run("work", "cancel", "a", dropped)
    assert (r.returncode, r.stdout) == (0, f"{dropped}: cancelled by the operator\n")
    assert run("work", "list", "a").stdout == ""
    again = run("work", "close", "a", done)
    assert again.returncode == 2 and again.stderr.startswith("holon: work_item_closed: ")
    unknown = run("work", "cancel", "a", "wi_nosuch")
    assert unknown.returncode == 2 and unknown.stderr.startswith("holon: unknown_work_item: ")
    kinds = [json.loads(x)["kind"] for x in agent.events.read_text().splitlines()]
    assert "work_item_completed" in kinds and "work_item_cancelled" in kinds

"""End-to-end lifecycle scenarios with the scripted provider, checked against golden transcripts."""

from __future__ import annotations

import json

from scenario_helpers import (
    T0,
    check_golden,
    cli,
    init_agent,
    normalize,
    script_for,
    set_now,
    transcript_view,
)

from holon.agent import workitems
from holon.agent.due import due_reasons
from holon.agent.handle import Agent


def _model(monkeypatch, name, home, subs=None):
    path = script_for(name, home, subs or {})
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{path}")


def _golden(name, home, extra=""):
    check_golden(name, normalize(transcript_view(home) + extra, str(home.root.parent.parent)))


def test_work_item_lifecycle_across_ticks(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    _model(monkeypatch, "work_item_lifecycle", home)
    code, out, err = cli("prompt", "a", "Ship the release notes, please.")
    assert code == 0, err
    wi = next(iter(workitems.load_all(home)))
    state = Agent(home).state()
    assert state.closure["outcome"] == "continuable"
    assert state.closure["work_signal"]["reactivation_mode"] == "activate_queued"
    assert due_reasons(home) == ["timer_due"]  # activation is found from next_due alone

    _model(monkeypatch, "work_item_lifecycle", home, {"work_item": wi})
    set_now(monkeypatch, T0 + 60)
    assert cli("tick", "a")[0] == 0
    state = Agent(home).state()
    assert state.current_work_item_id == wi
    assert state.closure["work_signal"]["reactivation_mode"] == "continue_active"

    set_now(monkeypatch, T0 + 120)
    assert cli("tick", "a")[0] == 0
    state = Agent(home).state()
    assert state.status.value == "asleep"
    assert state.closure["outcome"] == "waiting"
    assert state.closure["waiting_reason"] == "awaiting_external_change"
    assert (
        cli("tick", "a", "--json")[1].count('"idle"') == 1
    )  # nothing due while blocked and asleep

    from holon.agent import admission

    admission.admit(
        home,
        "task",
        "task_result",
        admission.text_body("task tsk_build exited 0: build passed"),
        task_id="tsk_build",
    )
    set_now(monkeypatch, T0 + 600)
    code, out, _ = cli("tick", "a", "--json")
    assert code == 0
    turn = json.loads(out)["agents"][0]["turns"][0]
    assert turn["final_text"] == "Release notes shipped: drafted, build passed, published."
    assert turn["raw_final_text"] == "Done."
    state = Agent(home).state()
    assert state.last_continuation["matched_waiting_reason"] is False
    assert state.closure["outcome"] == "completed" and state.closure["terminal_observed"]
    assert state.current_work_item_id is None
    rec = workitems.get(home, wi)
    assert rec["state"] == "completed" and rec["recheck_at"] is None
    view = workitems.view(home, rec, None)
    assert view["completion_report"].startswith("Release notes shipped")
    assert (
        view["plan_artifact"]["preview"].startswith("1. draft")
        and view["plan_artifact"]["preview_complete"]
    )
    code, out, _ = cli("status", "a", "--json")
    assert json.loads(out)["work_items"] == {"completed": 1}
    _golden("work_item_lifecycle", home)


def test_sleep_with_duration_is_woken_by_timer(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    _model(monkeypatch, "sleep_timer_wake", home)
    assert cli("prompt", "a", "Check back on the queue in ten minutes.")[0] == 0
    state = Agent(home).state()
    assert state.status.value == "asleep" and state.closure["waiting_reason"] == "awaiting_timer"
    assert abs(float(home.next_due.read_text()) - (T0 + 600)) < 0.01
    set_now(monkeypatch, T0 + 300)
    assert due_reasons(home) == []
    set_now(monkeypatch, T0 + 601)
    assert due_reasons(home) == ["timer_due"]
    code, out, _ = cli("tick", "a", "--json")
    report = json.loads(out)["agents"][0]
    assert report["turns"][0]["final_text"] == "Checked back: all quiet."
    assert Agent(home).state().last_continuation["matched_waiting_reason"] is True
    assert not home.next_due.exists()
    _golden("sleep_timer_wake", home)


def test_trigger_delivery_wakes_sleeping_agent(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    _model(monkeypatch, "trigger_wakes_sleeper", home)
    code, token, _ = cli("trigger", "rotate", "a")
    token = token.strip()
    assert code == 0 and token.startswith("htr_")
    assert cli("prompt", "a", "Wait for the deploy to finish.")[0] == 0
    assert Agent(home).state().status.value == "asleep"
    code, out, err = cli(
        "trigger", "deliver", token, "--source", "deploy-bot", stdin="deploy 42 finished"
    )
    assert code == 0, err
    assert due_reasons(home) == ["wake_hint"]
    code, out, _ = cli("tick", "a", "--json")
    assert (
        json.loads(out)["agents"][0]["turns"][0]["final_text"]
        == "Deploy finished; verified the release."
    )
    # a plain hint after a completed closure is liveness-only: the agent wakes without a model turn
    assert cli("trigger", "rotate", "a")[0] == 0
    token2 = cli("trigger", "show", "a")
    desc = json.loads(token2[1])
    assert desc["trigger_count"] == 1 and "token_sha256" not in desc
    before = home.transcript.read_text()
    _, token3, _ = cli("trigger", "rotate", "a")
    assert cli("trigger", "deliver", token3.strip(), stdin="")[0] == 0
    code, out, _ = cli("tick", "a", "--json")
    report = json.loads(out)["agents"][0]
    assert report["outcome"] == "woke" and "turns" not in report
    assert home.transcript.read_text() == before
    assert Agent(home).state().last_continuation["mode"] == "liveness_only"
    for path in home.dot.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(
                errors="ignore"
            ) and token3.strip() not in path.read_text(errors="ignore")
    _golden("trigger_wakes_sleeper", home)


def test_revoked_token_refused(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    _, token, _ = cli("trigger", "rotate", "a")
    token = token.strip()
    assert cli("trigger", "revoke", "a")[0] == 0
    code, out, err = cli("trigger", "deliver", token)
    assert code == 2 and token not in err
    code2, _, err2 = cli("trigger", "deliver", "htr_not-a-real-token")
    assert code2 == 2 and err2 == err
    assert not home.wake_hint.exists()
    check_golden("revoked_token_refused", normalize(f"exit {code}\n{err}"))


def test_stopped_agent_refuses_prompt_then_resumes(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    _model(monkeypatch, "stopped_then_resumed", home)
    assert cli("stop", "a")[0] == 0
    code, out, err = cli("prompt", "a", "hello?")
    assert code == 3 and "holon resume a" in err
    code_w, _, err_w = cli("wake", "a")
    assert code_w == 3 and "does not cross the stopped boundary" in err_w
    _, token, _ = cli("trigger", "rotate", "a")
    code_t, _, _ = cli("trigger", "deliver", token.strip())
    assert code_t == 3
    assert "lifecycle_hint" in json.loads(cli("status", "a", "--json")[1])
    assert cli("resume", "a")[0] == 0
    code, out, _ = cli("prompt", "a", "hello again")
    assert code == 0 and out.strip() == "Hello after resume."
    _golden("stopped_then_resumed", home, normalize(f"refused: exit {code_t}\n{err}{err_w}"))


def test_recheck_reminder_fires_as_background_tick(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    code, wi, _ = cli("work", "create", "a", "Get the vendor contract signed")
    wi = wi.strip()
    assert (
        code == 0 and not home.transcript.exists() or "message" not in home.transcript.read_text()
    )
    _model(monkeypatch, "recheck_reminder", home, {"work_item": wi})
    assert cli("prompt", "a", "Handle the vendor contract.")[0] == 0
    rec = workitems.get(home, wi)
    assert rec["blocked_by"] and rec["recheck_at"]
    set_now(monkeypatch, T0 + 1000)
    assert due_reasons(home) == []
    set_now(monkeypatch, T0 + 1801)
    assert due_reasons(home) == ["timer_due"]
    code, out, _ = cli("tick", "a", "--json")
    assert (
        json.loads(out)["agents"][0]["turns"][0]["final_text"]
        == "The vendor has not replied; still blocked."
    )
    rec = workitems.get(home, wi)
    assert rec["recheck_consumed_at"] and rec["blocked_by"]  # the reminder does not unblock
    assert due_reasons(home) == []
    _golden("recheck_reminder", home)

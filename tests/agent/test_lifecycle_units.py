"""Timers (planned schedule, missed occurrences, cron, guard), stale-run repair, tools,
schedule text."""

from __future__ import annotations

import json
import os

from scenario_helpers import REPO, T0, cli, init_agent, set_now

from holon.agent import timers as timer_store
from holon.agent.due import due_reasons
from holon.agent.handle import Agent
from holon.runtime.tick import tick
from holon.store import jsonl


def _timer_messages(home):
    return [m for m in jsonl.read(home.messages) if m["kind"] == "timer_tick"]


def test_repeating_timer_keeps_plan_and_reports_missed(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    assert cli("timer", "create", "a", "--every", "1h", "--text", "hourly check")[0] == 0
    set_now(monkeypatch, T0 + 3 * 3600 + 120)  # three planned occurrences passed while nothing ran
    assert due_reasons(home) == ["timer_due"]
    monkeypatch.setenv("HOLON_MODEL", "scripted/none.jsonl")
    report = tick(home)
    msgs = _timer_messages(home)
    assert len(msgs) == 1 and len(report.fired) == 1
    meta = msgs[0]["metadata"]
    assert meta["missed_count"] == 2 and meta["planned_at"].startswith("2027-01-15T11:00")
    assert "Missed 2 earlier occurrence(s)" in msgs[0]["body"]["text"]
    (timer,) = timer_store.load(home)
    assert timer["due_ts"] == T0 + 4 * 3600  # on the planned grid, not fired time + 1h


def test_cron_timer_in_zone(monkeypatch):
    set_now(monkeypatch, T0)  # 2027-01-15T08:00:00Z, a Friday
    init_agent()
    code, out, _ = cli(
        "timer", "create", "a", "--cron", "0 8 * * 1-5", "--tz", "America/New_York", "--json"
    )
    assert code == 0
    assert json.loads(out)["due_at"] == "2027-01-15T13:00:00.000Z"
    assert cli("timer", "create", "a", "--cron", "bad cron")[0] == 2


def test_guard_declines_wake(monkeypatch, tmp_path):
    set_now(monkeypatch, T0)
    home = init_agent()
    assert cli("timer", "create", "a", "--after", "10m", "--if", "test -e flag")[0] == 0
    set_now(monkeypatch, T0 + 601)
    tick(home)
    assert _timer_messages(home) == [] and timer_store.load(home) == []
    assert cli("timer", "create", "a", "--after", "10m", "--if", "true")[0] == 0
    set_now(monkeypatch, T0 + 1300)
    monkeypatch.setenv("HOLON_MODEL", "scripted/none.jsonl")
    tick(home)
    assert len(_timer_messages(home)) == 1


def test_timer_cancel_and_list(monkeypatch):
    set_now(monkeypatch, T0)
    home = init_agent()
    code, out, _ = cli("timer", "create", "a", "--after", "5m", "--json")
    tid = json.loads(out)["id"]
    assert tid in cli("timer", "list", "a")[1]
    assert home.next_due.exists()
    assert cli("timer", "cancel", "a", tid)[0] == 0
    assert not home.next_due.exists()
    assert cli("timer", "cancel", "a", tid)[0] == 2


def test_stale_awake_running_repaired_first(monkeypatch):
    home = init_agent()
    agent = Agent(home)

    def fake(s):
        s.status = s.status.__class__("awake_running")
        s.current_run_id = "msg_gone"
        s.run_owner_pid = 999_999_999

    agent.update_state(fake)
    tick(home)
    state = agent.state()
    assert state.status.value == "awake_idle" and state.run_owner_pid is None
    assert any(e["kind"] == "stale_run_repaired" for e in jsonl.read(home.events))


def test_enqueue_and_notify_tools(monkeypatch, tmp_path):
    home = init_agent()
    script = tmp_path / "s.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "text": "",
                    "tool_calls": [
                        {
                            "name": "Enqueue",
                            "arguments": {"text": "follow up", "priority": "background"},
                        },
                        {
                            "name": "NotifyOperator",
                            "arguments": {"text": "need a key", "visibility": "action_required"},
                        },
                    ],
                },
                {"text": "ok"},
            ]
        )
        + "\n"
    )
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")
    assert cli("prompt", "a", "go")[0] == 0
    (msg,) = [m for m in jsonl.read(home.messages) if m["kind"] == "internal_followup"]
    assert msg["authority_class"] == "runtime_instruction" and msg["priority"] == "background"
    briefs = list(jsonl.read(home.briefs))
    assert briefs[0]["visibility"] == "action_required" and briefs[0]["text"] == "need a key"


def test_complete_without_text_warns(monkeypatch, tmp_path):
    home = init_agent()
    code, wi, _ = cli("work", "create", "a", "Do a thing")
    wi = wi.strip()
    script = tmp_path / "s.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "text": "",
                    "tool_calls": [{"name": "CompleteWorkItem", "arguments": {"work_item_id": wi}}],
                },
                {"text": "raw end"},
            ]
        )
        + "\n"
    )
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")
    code, out, _ = cli("prompt", "a", "finish", "--json")
    assert json.loads(out)["final_text"] == "raw end"
    result = [e for e in jsonl.read(home.transcript) if e["kind"] == "tool_result"][0]
    assert result["data"]["envelope"]["result"]["warning"]["kind"] == "missing_completion_report"
    assert not (home.ledger / "delivery_summaries.jsonl").exists()


def test_stale_progress_reminder(monkeypatch, tmp_path):
    from holon.prompt import workqueue

    home = init_agent()
    code, wi, _ = cli("work", "create", "a", "Long job")
    Agent(home).update_state(lambda s: setattr(s, "current_work_item_id", wi.strip()))
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "3")
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_COOLDOWN_ROUNDS", "2")
    rounds = [{"text": ""}] * 3
    text = workqueue.stale_reminder(Agent(home), rounds, {})
    assert text and "Long job" in text
    assert workqueue.stale_reminder(Agent(home), [{}] * 4, {}) is None  # cooling down
    assert workqueue.stale_reminder(Agent(home), [{}] * 5, {}) is not None
    done = {"2:c": {"key": "2:c", "tool_name": "UpdateWorkItem", "status": "success"}}
    assert workqueue.stale_reminder(Agent(home), rounds, done) is None


def test_schedule_outputs_and_examples(monkeypatch):
    code, line, _ = cli("schedule", "cron", "--every", "5m")
    assert (
        code == 0
        and line.startswith("*/5 * * * * HOLON_HOME=")
        and " tick --all --log # holon tick: HOLON_HOME=" in line
    )
    code, plist, _ = cli("schedule", "launchd")
    assert "<string>tick</string>" in plist and "<integer>60</integer>" in plist
    code, units, _ = cli("schedule", "systemd")
    assert "[Timer]" in units and "ExecStart=/" in units
    examples = REPO / "examples"
    assert "tick --all --log" in (examples / "cron" / "crontab").read_text()
    assert "<string>--all</string>" in (examples / "launchd" / "dev.holon.tick.plist").read_text()
    assert "OnUnitActiveSec" in (examples / "systemd" / "holon-tick.timer").read_text()
    assert "trigger deliver" in (examples / "trigger-cgi" / "holon-trigger.cgi").read_text()


def test_doctor_reports_findings_with_fixes(monkeypatch):
    home = init_agent()
    home.queue.put({"id": "msg_x", "kind": "operator_prompt"}, "normal")
    code, out, _ = cli("doctor", "--json")
    report = json.loads(out)
    assert code == 0  # warnings only: exit 1 is for errors
    (agent,) = report["agents"]
    findings = report["findings"] + agent["findings"]
    assert [f["status"] for f in agent["findings"] if f["check"] == "pending"] == ["ok"]
    assert {f["check"] for f in findings if f["status"] == "warn"} >= {"model", "scheduler"}
    assert all(f["fix"] for f in findings if f["status"] != "ok")


def test_trigger_descriptor_mode_and_index(monkeypatch):
    home = init_agent()
    _, token, _ = cli("trigger", "rotate", "a")
    path = home.triggers / "default.json"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert token.strip() not in path.read_text()
    assert "trigger_index.json" in os.listdir(os.environ["HOLON_HOME"])

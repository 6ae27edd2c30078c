"""holon.ops.doctor: scheduler entries and per-agent findings, each with the command that fixes it.

The scheduler checks look at `crontab -l`, systemd user units and the launchd plist: PATH holds only
fake `crontab` and `holon` executables, HOME and XDG_CONFIG_HOME point into tmp_path.
"""

from __future__ import annotations

import os
from pathlib import Path

from fakes import FAKE_CRONTAB, executable
from scenario_helpers import cli

from holon.agent import admission
from holon.agent.handle import Agent
from holon.model.records import AgentStatus
from holon.ops import doctor, schedule
from holon.runtime.tick import tick


def _with_crontab(sandbox: Path, text: str | None) -> None:
    executable(sandbox / "crontab", FAKE_CRONTAB)
    if text is not None:
        Path(os.environ["FAKE_CRONTAB"]).write_text(text)


def _by_check(findings: list[dict], check: str) -> list[dict]:
    return [f for f in findings if f["check"] == check]


def test_no_scheduler_entry_is_a_warning_with_a_fix(sandbox):
    assert schedule.holon_executable() == str(sandbox / "holon")
    (f,) = doctor.scheduler_findings()
    assert (f["check"], f["status"]) == ("scheduler", "warn")
    assert f["fix"] == "holon schedule cron --install"
    _with_crontab(sandbox, None)  # crontab exists but the user has none
    assert doctor.scheduler_findings()[0]["status"] == "warn"


def test_cron_entry_for_this_holon_is_ok_and_others_are_flagged(sandbox):
    exe = sandbox / "holon"
    _with_crontab(
        sandbox,
        f"# * * * * * {exe} tick --all\n"
        f"* * * * * {exe} tick --all >/dev/null 2>&1\n"
        "*/5 * * * * /old/holon tick --all\n"
        "0 * * * * /usr/bin/backup\n",
    )
    findings = doctor.scheduler_findings()
    assert [(f["status"], f["scheduler"]) for f in findings] == [("ok", "cron"), ("warn", "cron")]
    assert findings[0]["fix"] is None and findings[0]["message"] == "cron entry found"
    assert f"does not run this holon ({exe})" in findings[1]["message"]
    assert findings[1]["fix"] == "holon schedule cron --install"


def test_systemd_unit_and_launchd_plist_are_found(sandbox):
    exe = sandbox / "holon"
    units = schedule.systemd_units(str(exe))
    schedule.systemd_dir().mkdir(parents=True)
    (schedule.systemd_dir() / "holon-tick.service").write_text(units["holon-tick.service"])
    schedule.launchd_path().parent.mkdir(parents=True)
    schedule.launchd_path().write_text(schedule.launchd_plist("/elsewhere/holon"))
    findings = doctor.scheduler_findings()
    assert [(f["scheduler"], f["status"]) for f in findings] == [
        ("systemd", "ok"),
        ("launchd", "warn"),
    ]
    assert findings[1]["fix"] == "holon schedule launchd --install"


def test_fresh_agent_was_never_ticked(sandbox, agent):
    (f,) = doctor.agent_findings(agent)
    assert (f["check"], f["status"], f["agent_id"], f["last_tick_at"]) == (
        "last_tick",
        "warn",
        "a",
        None,
    )
    assert f["message"] == "a: last tick at never" and f["fix"] == "holon tick a"


def test_dead_letters_and_due_work_are_reported(sandbox, agent):
    agent.queue.put({"id": "msg_broken"}, "normal")
    tick(agent)
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("waiting"))
    findings = doctor.agent_findings(agent)
    assert _by_check(findings, "last_tick")[0]["status"] == "ok"
    (due,) = _by_check(findings, "due_work")
    assert due["reasons"] == ["queued_messages"] and due["fix"] == "holon tick a --until-idle"
    (dead,) = _by_check(findings, "dead_letters")
    assert dead["status"] == "warn" and dead["count"] == 1
    assert dead["message"] == f"a: 1 dead-lettered message(s) in {agent.queue.dead}"
    assert dead["fix"].startswith(f"ls {agent.queue.dead}")
    assert str(agent.queue.new) in dead["fix"]


def test_stale_running_marker_and_dead_task_supervisor(sandbox, agent):
    def stale(s):
        s.status = AgentStatus.awake_running
        s.run_owner_pid = 999_999_999

    Agent(agent).update_state(stale)
    agent.tasks_active.mkdir(parents=True, exist_ok=True)
    (agent.tasks_active / "task_gone").write_text("999999998")
    findings = doctor.agent_findings(agent)
    (lock,) = _by_check(findings, "stale_lock")
    assert "pid 999999999, which is gone" in lock["message"] and lock["fix"] == "holon tick a"
    assert _by_check(findings, "interrupted_tasks")[0]["fix"] == "holon tick a"
    assert "task_recovery" in _by_check(findings, "due_work")[0]["reasons"]


def test_running_marker_of_a_live_process_is_not_stale(sandbox, agent):
    def running(s):
        s.status = AgentStatus.awake_running
        s.run_owner_pid = os.getpid()

    Agent(agent).update_state(running)
    assert _by_check(doctor.agent_findings(agent), "stale_lock") == []


def test_report_status_is_the_worst_finding(sandbox, agent):
    exe = sandbox / "holon"
    report = doctor.run()
    assert report["status"] == "warn" and report["holon"] == str(exe)
    _with_crontab(sandbox, f"* * * * * {exe} tick --all\n")
    tick(agent)
    report = doctor.run()
    assert report["status"] == "ok"
    assert [f["check"] for f in report["findings"]] == ["scheduler", "last_tick"]


def test_doctor_command_exit_codes_and_text(sandbox, agent):
    code, out, _ = cli("doctor")
    assert code == 1
    assert "[warn] a: last tick at never\n       fix: holon tick a" in out
    _with_crontab(sandbox, f"* * * * * {sandbox / 'holon'} tick --all\n")
    tick(agent)
    code, out, _ = cli("doctor", "--json")
    assert code == 0 and '"status": "ok"' in out

"""`holon doctor`: findings with their fix, exit 0 only when all is well. The crontab and the
systemd/launchd directories are fakes under tmp_path; the real ones are never read or written."""

from __future__ import annotations

import json
import os

import pytest
from cmd_checks import invoke

from holon.cli.doctor import doctor_cmd


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A PATH whose `holon` and `crontab` are fakes; HOME and XDG_CONFIG_HOME under tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    holon = bin_dir / "holon"
    holon.write_text("#!/bin/sh\nexit 0\n")
    crontab_file = tmp_path / "crontab.txt"
    crontab_file.write_text("")
    fake_crontab = bin_dir / "crontab"
    fake_crontab.write_text(f"#!/bin/sh\ncat '{crontab_file}'\n")
    for p in (holon, fake_crontab):
        p.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))

    class Machine:
        exe = os.path.realpath(holon)
        crontab = crontab_file
        systemd = tmp_path / "xdg" / "systemd" / "user"

    return Machine


def run_doctor(*args: str):
    result = invoke(doctor_cmd, *args)
    return result.exit_code, result.stdout


def doctor_json():
    code, out = run_doctor("--json")
    return code, json.loads(out)


def test_no_scheduler_is_a_warning_with_its_fix(machine, holon_env):
    code, doc = doctor_json()
    assert code == 1 and doc["status"] == "warn" and doc["holon"] == machine.exe
    (f,) = doc["findings"]
    assert set(f) >= {"check", "status", "message", "fix"}
    assert (f["check"], f["status"], f["fix"]) == (
        "scheduler",
        "warn",
        "holon schedule cron --install",
    )
    code, text = run_doctor()
    assert code == 1
    assert text.splitlines() == [f"[warn] {f['message']}", f"       fix: {f['fix']}"]


def test_cron_entry_for_this_holon_is_ok(machine, holon_env):
    machine.crontab.write_text(f"# comment tick --all\n* * * * * {machine.exe} tick --all\n")
    code, doc = doctor_json()
    assert code == 0 and doc["status"] == "ok"
    assert doc["findings"] == [
        {
            "check": "scheduler",
            "status": "ok",
            "message": "cron entry found",
            "fix": None,
            "scheduler": "cron",
        }
    ]
    assert run_doctor() == (0, "[ok] cron entry found\n")


def test_entries_for_another_holon_are_flagged(machine, holon_env):
    machine.crontab.write_text("* * * * * /opt/old/holon tick --all\n")
    machine.systemd.mkdir(parents=True)
    (machine.systemd / "holon-tick.service").write_text(f"ExecStart={machine.exe} tick --all\n")
    code, doc = doctor_json()
    by_kind = {f["scheduler"]: f for f in doc["findings"]}
    assert by_kind["systemd"]["status"] == "ok"
    assert by_kind["cron"]["status"] == "warn" and machine.exe in by_kind["cron"]["message"]
    assert by_kind["cron"]["fix"] == "holon schedule cron --install"
    assert code == 1 and doc["status"] == "warn"


def test_agent_findings(machine, agent):
    from holon.agent import admission

    machine.crontab.write_text(f"* * * * * {machine.exe} tick --all\n")
    admission.admit(agent, "enqueue", "system_tick", admission.text_body("x"))
    agent.queue.ensure()
    (agent.queue.dead / "0001.json").write_text("{}")
    state = json.loads(agent.state_json.read_text())
    agent.state_json.write_text(
        json.dumps({**state, "status": "awake_running", "run_owner_pid": 2**22 + 12345})
    )
    code, doc = doctor_json()
    checks = {f["check"]: f for f in doc["findings"] if f.get("agent_id") == "a"}
    assert set(checks) == {"last_tick", "due_work", "dead_letters", "stale_lock"}
    assert checks["last_tick"]["fix"] == "holon tick a"
    assert "queued_messages" in checks["due_work"]["reasons"]
    assert checks["due_work"]["fix"] == "holon tick a --until-idle"
    assert checks["dead_letters"]["count"] == 1
    assert code == 1 and doc["status"] == "warn"


def test_a_ticked_idle_agent_is_ok(machine, agent):
    from holon.runtime.tick import tick

    machine.crontab.write_text(f"* * * * * {machine.exe} tick --all\n")
    tick(agent, wait=True)
    code, doc = doctor_json()
    assert [f["check"] for f in doc["findings"]] == ["scheduler", "last_tick"]
    assert doc["findings"][1]["status"] == "ok" and doc["findings"][1]["last_tick_at"]
    assert (code, doc["status"]) == (0, "ok")


def test_doctor_writes_nothing(machine, agent):
    before = {p: p.read_bytes() for p in agent.root.rglob("*") if p.is_file()}
    assert run_doctor("--json")[0] == 1
    after = {p: p.read_bytes() for p in agent.root.rglob("*") if p.is_file()}
    assert after == before
    assert not machine.systemd.exists() and machine.crontab.read_text() == ""

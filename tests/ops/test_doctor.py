"""holon.ops.doctor: HOLON_HOME, config, scheduler entries and per-agent findings, with fixes.

The scheduler checks read `crontab -l` and the systemd/launchd directories: PATH holds only fake
`crontab` and `holon` executables, HOME and XDG_CONFIG_HOME point into tmp_path (see conftest).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fakes import FAKE_CRONTAB, executable
from scenario_helpers import cli

from holon import clock, config, keys
from holon.agent import admission, budget
from holon.agent.handle import Agent
from holon.errors import UnknownAgent
from holon.home.init import init_home
from holon.model.records import AgentStatus
from holon.ops import doctor
from holon.runtime.tick import tick


def _crontab(sandbox: Path, text: str) -> None:
    executable(sandbox / "crontab", FAKE_CRONTAB)
    Path(os.environ["FAKE_CRONTAB"]).write_text(text)


def _cron_line(exe: Path | str, home: Path | str, prefix: str = "") -> str:
    return (
        f"* * * * * {prefix}HOLON_HOME={home} PATH=/usr/bin:/bin {exe} tick --all --log "
        f"# holon tick: HOLON_HOME={home}\n"
    )


def _checks(findings: list[dict]) -> dict[str, dict]:
    return {f["check"]: f for f in findings}


def _report(agent_home) -> dict:
    (doc,) = [a for a in doctor.run()["agents"] if a["home"] == str(agent_home.root)]
    return doc


def _script(tmp_path: Path, *rounds: dict) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    return f"scripted/{path}"


# -- HOLON_HOME, config, scheduler ----------------------------------------------------------
def test_the_holon_home_checked_comes_first(sandbox, holon_env):
    report = doctor.run()
    assert report["holon_home"] == str(holon_env)
    first = report["findings"][0]
    assert (first["check"], first["status"]) == ("holon_home", "warn")  # not created yet
    assert "does not exist" in first["message"] and first["fix"] == "holon init --agent-id ID"
    holon_env.mkdir()
    first = doctor.run()["findings"][0]
    assert (
        first["status"] == "ok"
        and first["message"] == f"{holon_env} (set in the environment) exists"
    )


def test_config_parses_and_names_its_default_model(sandbox, holon_env, monkeypatch):
    holon_env.mkdir()
    assert _checks(doctor.run()["findings"])["config"]["message"].endswith("no default model")
    (holon_env / "config.toml").write_text('model = "scripted/x.jsonl"\n')
    config.reset()
    found = _checks(doctor.run()["findings"])["config"]
    assert found["status"] == "ok" and found["default_model"] == "scripted/x.jsonl"
    assert found["message"] == f"{holon_env / 'config.toml'} parses; default model scripted/x.jsonl"
    monkeypatch.setenv("HOLON_MODEL", "openai/gpt-5")
    found = _checks(doctor.run()["findings"])["config"]
    assert "HOLON_MODEL=openai/gpt-5 in this environment overrides it" in found["message"]


def test_config_syntax_error_is_an_error_and_agents_are_still_checked(sandbox, agent, tmp_path):
    budget.set_override(Agent(agent), _script(tmp_path, {"text": "hi"}))
    (agent.root.parent.parent / "config.toml").write_text("model = \n")
    config.reset()
    report = doctor.run()
    found = _checks(report["findings"])["config"]
    assert (found["status"], found["kind"]) == ("error", "invalid_config")
    assert "is not valid TOML" in found["message"] and found["fix"].startswith("fix the syntax")
    (a,) = report["agents"]
    assert _checks(a["findings"])["model"]["status"] == "ok"
    assert report["status"] == "error"


def test_no_scheduler_entry_is_a_warning_with_a_fix(sandbox, holon_env):
    (f,) = doctor.scheduler_findings()
    assert (f["check"], f["status"]) == ("scheduler", "warn")
    assert f["fix"] == "holon schedule cron --install"
    _crontab(sandbox, "0 * * * * /usr/bin/backup\n")
    assert doctor.scheduler_findings()[0]["status"] == "warn"


def test_an_entry_for_this_home_is_ok_and_says_where_it_logs(sandbox, holon_env):
    _crontab(sandbox, _cron_line(sandbox / "holon", holon_env))
    (f,) = doctor.scheduler_findings()
    assert f["status"] == "ok" and f["fix"] is None
    assert f["message"] == (
        f"cron entry in crontab ticks this HOLON_HOME with {sandbox / 'holon'}; "
        f"logs: {holon_env / 'logs' / 'tick.log'}"
    )
    assert (f["scheduler"], f["holon_home"], f["command"]) == (
        "cron",
        str(holon_env),
        str(sandbox / "holon"),
    )


def test_entries_for_other_homes_only_are_named(sandbox, holon_env, tmp_path):
    _crontab(sandbox, _cron_line(sandbox / "holon", tmp_path / "other"))
    (f,) = doctor.scheduler_findings()
    assert f["status"] == "warn" and f["fix"] == "holon schedule cron --install"
    assert f["message"].endswith(f"entries tick only {tmp_path / 'other'}")


def test_an_entry_whose_command_is_gone_is_an_error(sandbox, holon_env, tmp_path):
    _crontab(
        sandbox,
        _cron_line("/nowhere/bin/holon", holon_env)
        + _cron_line("/nowhere/bin/holon", tmp_path / "other"),
    )
    mine, other = doctor.scheduler_findings()  # this home has an entry: it is broken
    assert (mine["status"], mine["fix"]) == ("error", "holon schedule cron --install")
    assert "runs /nowhere/bin/holon, which does not exist" in mine["message"]
    assert other["status"] == "error"
    assert other["fix"] == f"HOLON_HOME={tmp_path / 'other'} holon schedule cron --install"


def test_a_key_in_a_crontab_line_is_never_shown(sandbox, holon_env, agent):
    secret = "sk-test-DO-NOT-PRINT-1234"
    _crontab(sandbox, _cron_line(sandbox / "holon", holon_env, f"OPENAI_API_KEY={secret} "))
    report = doctor.run()
    assert _checks(report["findings"])["scheduler"]["status"] == "ok"
    assert secret not in json.dumps(report)
    code, out, err = cli("doctor")
    assert code == 0 and secret not in out + err


# -- one agent -------------------------------------------------------------------------------
def test_a_brand_new_agent_is_not_a_warning(sandbox, agent):
    doc = _report(agent)
    assert [(f["check"], f["status"]) for f in doc["findings"]] == [
        ("model", "ok"),
        ("last_tick", "ok"),
        ("sandbox", "ok"),
    ]
    assert doc["model"] is None and doc["last_tick_at"] is None
    assert "no model yet" in doc["findings"][0]["message"]


def test_a_prompted_agent_without_a_model_is_warned(sandbox, agent):
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("hi"))
    found = _checks(_report(agent)["findings"])
    assert found["model"]["status"] == "warn" and found["model"]["fix"] == (
        "holon model set a PROVIDER/MODEL"
    )
    assert (found["last_tick"]["status"], found["last_tick"]["fix"]) == ("warn", "holon tick a")


def test_a_model_whose_key_is_missing_is_an_error(sandbox, agent):
    budget.set_override(Agent(agent), "openai/gpt-5")
    doc = _report(agent)
    found = _checks(doc["findings"])["model"]
    assert (found["status"], found["kind"]) == ("error", "missing_credentials")
    assert "OPENAI_API_KEY" in found["message"] and "holon keys set" in found["fix"]
    assert doc["credentials"] == {
        "provider": "openai",
        "api_key_env": "OPENAI_API_KEY",
        "present": False,
        "source": None,
    }


def test_a_key_only_in_this_environment_is_a_warning_and_never_printed(sandbox, agent, monkeypatch):
    secret = "sk-test-ENV-ONLY-5678"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    budget.set_override(Agent(agent), "openai/gpt-5")
    doc = _report(agent)
    found = _checks(doc["findings"])
    assert found["model"]["status"] == "ok"
    assert found["credentials"]["status"] == "warn"
    assert "cron" in found["credentials"]["message"]
    assert found["credentials"]["fix"] == (
        'printf %s "$OPENAI_API_KEY" | holon keys set OPENAI_API_KEY -'
    )
    assert doc["credentials"]["source"] == "environment"
    keys.set_key("OPENAI_API_KEY", secret)
    assert _checks(_report(agent)["findings"])["credentials"]["status"] == "ok"
    monkeypatch.delenv("OPENAI_API_KEY")
    found = _checks(_report(agent)["findings"])["credentials"]
    assert found == {
        "check": "credentials",
        "status": "ok",
        "message": f"OPENAI_API_KEY from {keys.path()}",
        "fix": None,
    }
    code, out, err = cli("doctor", "--json")
    assert secret not in out + err


def test_a_default_model_only_in_this_environment_is_a_warning(
    sandbox, agent, tmp_path, monkeypatch
):
    ref = _script(tmp_path, {"text": "hi"})
    monkeypatch.setenv("HOLON_MODEL", ref)
    found = _checks(_report(agent)["findings"])["model"]
    assert found["status"] == "warn" and found["fix"] == f"holon model set a {ref}"
    assert "HOLON_MODEL in this environment only" in found["message"]
    (agent.root.parent.parent / "config.toml").write_text(f'model = "{ref}"\n')
    config.reset()
    found = _checks(_report(agent)["findings"])["model"]
    assert found["status"] == "ok" and "the default in config.toml" in found["message"]


def test_a_missing_script_is_an_error(sandbox, agent, tmp_path):
    budget.set_override(Agent(agent), f"scripted/{tmp_path / 'nope.jsonl'}")
    found = _checks(_report(agent)["findings"])["model"]
    assert (found["status"], found["kind"]) == ("error", "missing_script")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("<<<<<<< HEAD\n", "state.json is not valid JSON (Expecting value at line 1)"),
        ("[1, 2]", "state.json is not a JSON object"),
        ('{"id": "a", "status": "bogus"}', "state.json does not match its schema (status: "),
    ],
)
def test_a_corrupt_state_json_is_an_error_naming_the_file(sandbox, agent, text, reason):
    agent.state_json.write_text(text)
    doc = _report(agent)
    (found,) = [f for f in doc["findings"] if f["check"] == "home"]
    assert found["status"] == "error" and found["file"] == str(agent.state_json)
    assert found["message"].startswith(reason)
    assert doctor.run()["status"] == "error"


def test_a_corrupt_agent_json_given_by_path(sandbox, agent):
    agent.agent_json.write_text("{")
    report = doctor.run([str(agent.root)])
    (doc,) = report["agents"]
    assert doc["agent_id"] == "a" and doc["findings"][0]["file"] == str(agent.agent_json)


def test_a_deleted_registered_home_is_an_error_with_the_forget_fix(sandbox, holon_env, tmp_path):
    home = init_home(str(tmp_path / "gone"), "gone")
    shutil.rmtree(home.root)
    (doc,) = doctor.run()["agents"]
    (found,) = doc["findings"]
    assert (found["check"], found["status"], found["fix"]) == (
        "home",
        "error",
        "holon agents forget gone",
    )
    assert found["message"] == f"the registered home no longer exists: {home.root}"
    assert doctor.run(["gone"])["agents"] == [doc]


def test_a_directory_that_lost_its_agent_json_is_not_forgettable(sandbox, agent):
    from holon.home import registry

    registry.unregister("a")
    agent.agent_json.unlink()
    (doc,) = doctor.run()["agents"]
    assert doc["findings"][0]["fix"] is None
    assert "move or delete" in doc["findings"][0]["message"]


def test_dead_letters_and_the_last_failure(sandbox, agent, tmp_path):
    agent.queue.put({"id": "msg_broken"}, "normal")
    tick(agent)
    doc = _report(agent)
    found = _checks(doc["findings"])
    assert doc["dead_letters"] == 1 and found["dead_letters"]["count"] == 1
    assert found["dead_letters"]["fix"].startswith(f"ls {agent.queue.dead}")
    assert doc["last_failure"]["text"].startswith("message msg_broken")
    assert found["last_failure"]["status"] == "warn"
    assert found["last_failure"]["fix"] == "holon briefs a --tail 5"
    budget.set_override(Agent(agent), _script(tmp_path, {"text": "all good"}))
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("again"))
    tick(agent)
    doc = _report(agent)
    assert doc["last_failure"]["recovered"] is True
    assert "last_failure" not in _checks(doc["findings"])


def test_a_task_whose_supervisor_died_is_stuck(sandbox, agent):
    task = agent.task_dir("task_stuck")
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"id": "task_stuck", "status": "running"}))
    agent.tasks_active.mkdir(parents=True)
    (agent.tasks_active / "task_stuck").write_text("999999998\n")
    (agent.tasks_active / "task_alive").write_text(f"{os.getpid()}\n")
    doc = _report(agent)
    assert doc["stuck_tasks"] == [
        {"task_id": "task_stuck", "status": "running", "supervisor_pid": 999999998}
    ]
    found = _checks(doc["findings"])
    assert (
        found["stuck_tasks"]["fix"] == "holon tick a"
        and "task_stuck" in (found["stuck_tasks"]["message"])
    )
    assert doc["pending"]["due"] == ["task_recovery"]


def test_pending_work_warns_only_when_no_tick_has_run_it_for_long(sandbox, agent, monkeypatch):
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("waiting"))
    found = _checks(_report(agent)["findings"])["pending"]
    assert found["status"] == "ok" and "queued_messages" in found["message"]
    monkeypatch.setenv("HOLON_NOW", str(clock.now_ts() + doctor.STALLED_AFTER_S + 60))
    doc = _report(agent)
    found = _checks(doc["findings"])["pending"]
    assert (found["status"], found["fix"]) == ("warn", "holon tick a --until-idle")
    assert "is the scheduler running?" in found["message"] and doc["pending"]["messages"] == 1

    def ticked_just_now(s):
        s.last_tick_at = clock.now_iso()

    Agent(agent).update_state(ticked_just_now)
    assert _checks(_report(agent)["findings"])["pending"]["status"] == "ok"


def test_stale_running_marker(sandbox, agent):
    def stale(s):
        s.status = AgentStatus.awake_running
        s.run_owner_pid = 999_999_999

    Agent(agent).update_state(stale)
    found = _checks(_report(agent)["findings"])["stale_lock"]
    assert "pid 999999999, which is gone" in found["message"] and found["fix"] == "holon tick a"


def test_agent_arguments_narrow_the_report(sandbox, agent, holon_env):
    init_home(None, "b")
    assert [a["agent_id"] for a in doctor.run(["b"])["agents"]] == ["b"]
    assert [a["agent_id"] for a in doctor.run(["b", "a", "b"])["agents"]] == ["a", "b"]
    with pytest.raises(UnknownAgent):
        doctor.run(["nobody"])


def test_status_is_the_worst_finding(sandbox, agent):
    assert doctor.run()["status"] == "warn"  # no scheduler entry
    budget.set_override(Agent(agent), "anthropic/claude-sonnet-4-5")
    assert doctor.run()["status"] == "error"


def test_an_error_naming_its_file_is_reported_with_that_file_and_hint(agent):
    from holon.errors import OperationFailed

    settings = agent.dot / "settings.json"
    settings.write_text("{")
    exc = OperationFailed(
        f"{settings} is not valid JSON (Expecting value at line 1)",
        kind="corrupt_state",
        hint="restore it from git",
    )
    assert doctor.problem_of(exc, agent) == {
        "status": "broken",
        "problem": "settings.json is not valid JSON (Expecting value at line 1)",
        "file": str(settings),
        "fix": "restore it from git",
    }
    other = doctor.problem_of(OperationFailed("disk on fire"), agent)
    assert (other["problem"], other["file"]) == ("disk on fire", str(agent.state_json))


def test_doctor_writes_nothing(sandbox, agent, tmp_path):
    healthy = init_home(None, "b")
    budget.set_override(Agent(healthy), _script(tmp_path, {"text": "done"}))
    admission.admit(healthy, "cli_prompt", "operator_prompt", admission.text_body("hi"))
    tick(healthy)
    budget.set_override(Agent(agent), "openai/gpt-5")
    agent.state_json.write_text("<<<<<<< HEAD\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    doctor.run()
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before

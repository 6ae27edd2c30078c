"""`holon doctor` through the real entry point: one HOLON_HOME with an agent for each fault, as
golden JSON and text; a config.toml that does not parse; exit codes. The crontab is a fake backed
by a file and HOME/XDG_CONFIG_HOME are under tmp_path: the real ones are never read."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cmd_checks import fails, invoke
from fakes import FAKE_CRONTAB, executable
from golden_check import check, normalize
from helpers import run, subprocess_env
from scenario_helpers import cli

from holon import clock
from holon.agent import admission, budget
from holon.agent.handle import Agent
from holon.cli.doctor import doctor_cmd
from holon.home.init import init_home
from holon.runtime.tick import tick

SECRET = "sk-test-inline-in-crontab-0000"


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """PATH: a fake `crontab` and `holon` only; the crontab holds an entry for this HOLON_HOME
    (with a key inline, which must never be shown) and one for another home whose command is
    gone."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "holon", "#!/bin/sh\nexit 0\n")
    executable(bin_dir / "crontab", FAKE_CRONTAB)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("FAKE_CRONTAB", str(tmp_path / "crontab.txt"))
    return bin_dir


def _crontab(tmp_path: Path, *entries: tuple[Path | str, Path | str, str]) -> None:
    """The fake crontab: one `holon tick` line per (command, HOLON_HOME, inline assignments)."""
    (tmp_path / "crontab.txt").write_text(
        "".join(
            f"* * * * * {inline}HOLON_HOME={home} PATH=/usr/bin:/bin {exe} tick --all --log "
            f"# holon tick: HOLON_HOME={home}\n"
            for exe, home, inline in entries
        )
    )


def _script(tmp_path: Path, name: str, *rounds: dict) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    return f"scripted/{path}"


def _every_fault(holon_env: Path, tmp_path: Path, bin_dir: Path) -> None:
    """One agent per fault (and a healthy and a brand-new one)."""
    ok = _script(tmp_path, "ok.jsonl", {"text": "done"})
    healthy = init_home(None, "healthy")
    budget.set_override(Agent(healthy), ok)
    admission.admit(healthy, "cli_prompt", "operator_prompt", admission.text_body("hello"))
    tick(healthy)
    init_home(None, "new")  # never prompted, no model: not a warning
    nomodel = init_home(None, "nomodel")
    admission.admit(nomodel, "cli_prompt", "operator_prompt", admission.text_body("hello"))
    budget.set_override(Agent(init_home(None, "nokey")), "openai/gpt-5")
    corrupt = init_home(None, "corrupt")
    corrupt.state_json.write_text('<<<<<<< HEAD\n{"status": "asleep"}\n=======\n>>>>>>> b\n')
    shutil.rmtree(init_home(str(tmp_path / "elsewhere" / "deleted"), "deleted").root)
    dead = init_home(None, "dead")
    budget.set_override(Agent(dead), ok)
    dead.queue.put({"id": "msg_unreadable"}, "normal")
    tick(dead)
    stuck = init_home(None, "stuck")
    budget.set_override(Agent(stuck), ok)
    task = stuck.task_dir("task_stuck")  # as holon.tasks.store writes them
    task.mkdir(parents=True)
    record = {"schema_version": 1, "id": "task_stuck", "agent_id": "stuck", "status": "running"}
    (task / "task.json").write_text(json.dumps({**record, "supervisor_pid": 999999998}))
    stuck.tasks_active.mkdir(parents=True)
    (stuck.tasks_active / "task_stuck").write_text("999999998\n")
    (holon_env / "config.toml").write_text("[runtime]\ndelivery_limit = 3\n")
    _crontab(
        tmp_path,
        (bin_dir / "holon", holon_env, f"OPENAI_API_KEY={SECRET} "),
        ("/opt/gone/bin/holon", tmp_path / "old-home", ""),
    )


def _doctor(tmp_path: Path, *args: str):
    later = str(clock.now_ts() + 3600)  # every queued message has waited an hour
    proc = run("doctor", *args, env=subprocess_env(HOLON_NOW=later))
    assert "Traceback" not in proc.stderr and SECRET not in proc.stdout + proc.stderr
    queue_file = re.compile(r"\b\d-\d{20}-\d+-[0-9a-f]{8}\.json")  # band-time-pid-random
    return proc.returncode, queue_file.sub("<queue-file>", normalize(proc.stdout, tmp_path))


def test_doctor_json_golden_every_fault(machine, holon_env, tmp_path):
    _every_fault(holon_env, tmp_path, machine)
    code, out = _doctor(tmp_path, "--json")
    assert code == 1
    check("doctor/every-fault.json", out)
    doc = json.loads(out)
    worst = {a["agent_id"]: max(f["status"] for f in a["findings"]) for a in doc["agents"]}
    assert worst["healthy"] == "ok" and worst["new"] == "ok"
    assert doc["holon_home"] == "<tmp>/holon-home"


def test_doctor_text_golden_every_fault(machine, holon_env, tmp_path):
    _every_fault(holon_env, tmp_path, machine)
    code, out = _doctor(tmp_path)
    assert code == 1
    assert out.splitlines()[0] == "HOLON_HOME=<tmp>/holon-home"
    check("doctor/every-fault.txt", out)


def test_doctor_json_golden_bad_config(machine, holon_env, tmp_path):
    scripted = init_home(None, "scripted")
    budget.set_override(Agent(scripted), _script(tmp_path, "ok.jsonl", {"text": "done"}))
    budget.set_override(Agent(init_home(None, "configured")), "ollama/llama3")
    init_home(None, "new")
    (holon_env / "config.toml").write_text('model = "openai/gpt-5\n[providers.ollama\n')
    _crontab(tmp_path, (machine / "holon", holon_env, ""))
    code, out = _doctor(tmp_path, "--json")
    assert code == 1
    check("doctor/bad-config.json", out)
    doc = json.loads(out)
    assert [a["agent_id"] for a in doc["agents"]] == ["configured", "new", "scripted"]


def test_exit_code_is_0_with_warnings_only(machine, holon_env):
    init_home(None, "a")
    result = invoke(doctor_cmd)
    assert result.exit_code == 0 and "[warn] scheduler: no scheduler entry" in result.stdout
    result = invoke(doctor_cmd, "--json", "a")
    assert result.exit_code == 0 and json.loads(result.stdout)["status"] == "warn"


def test_everything_in_order_is_all_ok(machine, holon_env, tmp_path):
    agent = init_home(None, "a")
    budget.set_override(Agent(agent), _script(tmp_path, "ok.jsonl", {"text": "done"}))
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("hello"))
    tick(agent)
    _crontab(tmp_path, (machine / "holon", holon_env, ""))
    code, out, _ = cli("doctor", "--json")
    doc = json.loads(out)
    assert (code, doc["status"]) == (0, "ok")
    assert [f["check"] for f in doc["findings"]] == ["holon_home", "config", "scheduler"]
    assert [f["check"] for f in doc["agents"][0]["findings"]] == [
        "model",
        "last_tick",
        "sandbox",
        "activity",
    ]


def test_unknown_agent_argument_is_a_usage_error(machine, holon_env):
    init_home(None, "a")
    fails("doctor", "nobody", code=2, kind="unknown_agent")


def test_help_documents_the_exit_codes(holon_env):
    out = run("doctor", "--help").stdout
    assert "Usage: holon doctor [OPTIONS] [AGENT]..." in out
    assert "1 when any" in out and "finding is an" in out

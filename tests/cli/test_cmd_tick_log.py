"""`holon tick --log`: cron's convention. Silent on success with the report in
$HOLON_HOME/logs/tick.log; on failure the report and `log: <path>` on stderr; an idle run writes
nothing and stays light."""

from __future__ import annotations

import re
import subprocess
import sys

from cmd_checks import fails
from helpers import subprocess_env
from scenario_helpers import cli

from holon.agent import admission, control

HEAD = re.compile(
    r"== \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z holon tick (.*) \(pid \d+\): exit (\d)"
)


def queue(agent, *texts: str) -> None:
    for text in texts:
        admission.admit(agent, "enqueue", "system_tick", admission.text_body(text))


def blocks(holon_env) -> list[tuple[str, str, list[str]]]:
    """(what, exit code, lines) per block of tick.log."""
    out = []
    for line in (holon_env / "logs" / "tick.log").read_text().splitlines():
        m = HEAD.fullmatch(line)
        if m:
            out.append((m[1], m[2], []))
        else:
            out[-1][2].append(line)
    return out


def test_an_idle_run_prints_and_writes_nothing(agent, holon_env):
    assert cli("tick", "--all", "--log") == (0, "", "")
    assert cli("tick", "a", "--log") == (0, "", "")
    assert not (holon_env / "logs").exists()


def test_success_is_silent_and_logged(agent, holon_env, script):
    queue(agent, "m1", "m2")
    code, out, err = cli(
        "tick", "--all", "--until-idle", "--log", "--model", script({"text": "1"}, {"text": "2"})
    )
    assert (code, out, err) == (0, "", "")
    ((what, exit_code, lines),) = blocks(holon_env)
    assert (what, exit_code, lines[0]) == ("--all", "0", "a: ran")
    assert len(lines) == 3 and all(ln.endswith(" completed") for ln in lines[1:])
    assert agent.queue.depth() == 0


def test_a_failed_turn_prints_the_report_and_the_log(agent, holon_env, script):
    queue(agent, "m1")
    code, out, err = cli("tick", "--all", "--log", "--model", script({"error": {"status": 400}}))
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0] == "a: ran" and lines[1].endswith(" failed")
    assert lines[2].startswith("    ") and lines[-1] == f"log: {holon_env / 'logs' / 'tick.log'}"
    assert blocks(holon_env) == [("--all", "1", lines[:-1])]


def test_an_error_is_printed_with_its_hint_and_logged(agent, holon_env):
    _, err = fails("tick", "nobody", "--log", code=2, kind="unknown_agent")
    lines = err.splitlines()
    assert lines[-1] == f"log: {holon_env / 'logs' / 'tick.log'}"
    assert blocks(holon_env) == [("nobody", "2", lines[:-1])]
    fails("tick", "--log", code=2, kind="missing_agent")
    assert blocks(holon_env)[-1][:2] == ("", "2")


def test_a_broken_registry_under_cron_is_reported(agent, holon_env):
    (holon_env / "registry.json").write_text("{not json")
    code, out, err = cli("tick", "--all", "--log")  # the agents under agents/ still run
    assert (code, out) == (1, "")
    assert err.startswith(f"(registry): broken {holon_env}: ") and "not valid JSON" in err
    assert err.endswith(f"log: {holon_env / 'logs' / 'tick.log'}\n")
    assert blocks(holon_env)[0][2][0].startswith("(registry): broken ")


def test_paused_agents(agent, holon_env, script):
    queue(agent, "m1")
    control.pause(agent)
    assert cli("tick", "--all", "--log", "--model", script({"text": "never"})) == (0, "", "")
    hint = "hint: run `holon resume a` to process its queue"
    assert blocks(holon_env) == [("--all", "0", ["a: paused", hint])]
    code, out, err = cli("tick", "a", "--log")
    assert (code, out) == (3, "") and err.splitlines()[:2] == ["a: paused", hint]
    assert blocks(holon_env)[-1] == ("a", "3", ["a: paused", hint])


def test_log_and_json_do_not_mix(agent):
    fails("tick", "--all", "--log", "--json", code=2, kind="conflicting_options")


def test_a_log_that_cannot_be_written_is_said(agent, holon_env, script):
    (holon_env / "logs").write_text("not a directory")
    queue(agent, "m1")
    code, out, err = cli("tick", "--all", "--log", "--model", script({"text": "done"}))
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0] == "a: ran" and lines[1].endswith(" completed")
    assert lines[2].startswith("holon: log_failed: cannot write ") and lines[3].startswith("hint: ")
    assert agent.queue.depth() == 0  # the turn itself ran


def test_without_log_nothing_changes(agent, holon_env, script):
    queue(agent, "m1")
    code, out, err = cli("tick", "a", "--model", script({"error": {"status": 400}}))
    lines = out.splitlines()
    assert code == 1 and err == "" and lines[0] == "a: ran" and lines[1].endswith(" failed")
    assert not any(line.startswith("    ") for line in lines)  # the why is for the log only
    assert not (holon_env / "logs").exists()


def test_an_idle_logged_tick_stays_light(agent):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "holon", "tick", "--all", "--log"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert proc.returncode == 0 and proc.stdout == ""
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    heavy = {"pydantic", "openai", "anthropic", "httpx", "sqlite3", "croniter", "pexpect"}
    assert "click" in names and not heavy & names
    assert "holon.ops.ticklog" not in proc.stderr  # nothing to report: not even the log module

"""The printed entries work when pasted verbatim: each is run the way its scheduler runs it, in the
scheduler's bare environment (`env -i HOME LOGNAME PATH=/usr/bin:/bin SHELL=/bin/sh`), and the
agent's queued prompt is processed with the model from $HOLON_HOME/config.toml.

The tests run `python -m holon` from the checkout, so the entries come out as `<python> -m holon`
with PYTHONPATH set: that is what runs here.
"""

from __future__ import annotations

import getpass
import json
import plistlib
import shlex
import subprocess
import sys

import pytest
from helpers import REPO, run

LOG_LINE = "log: {}/logs/tick.log"


@pytest.fixture
def home(holon_env, tmp_path, monkeypatch):
    """A HOLON_HOME whose path needs quoting, an agent `a`, and a model in config.toml only."""
    home = tmp_path / "my 'holon' home %1"
    monkeypatch.setenv("HOLON_HOME", str(home))
    assert run("init", "--agent-id", "a").returncode == 0
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "done while you slept"}) + "\n")  # then it is exhausted
    (home / "config.toml").write_text(f"model = {json.dumps(f'scripted/{script}')}\n")
    return home


def bare(tmp_path, env: dict[str, str], argv: list[str]) -> subprocess.CompletedProcess:
    """Run argv as a scheduler would: nothing of this environment, only `env` on top."""
    user = tmp_path / "user"
    user.mkdir(exist_ok=True)
    base = [f"HOME={user}", f"LOGNAME={getpass.getuser()}", "PATH=/usr/bin:/bin", "SHELL=/bin/sh"]
    extra = [f"{k}={v}" for k, v in env.items()]
    return subprocess.run(
        ["/usr/bin/env", "-i", *base, *extra, *argv],
        capture_output=True,
        text=True,
        cwd=user,
        timeout=120,
    )


def processed(home) -> None:
    """The prompt was run: a result brief, nothing left in the queue."""
    briefs = [json.loads(ln) for ln in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert [(b["kind"], b["text"]) for b in briefs] == [("result", "done while you slept")]
    status = json.loads(run("status", "a", "--json").stdout)
    assert status["queue"]["pending"] == 0 and status["queue"]["in_progress"] == 0
    head, ran, turn = (home / "logs" / "tick.log").read_text().splitlines()
    assert head.startswith("== ") and " holon tick --all (pid " in head and head.endswith("exit 0")
    assert ran == "a: ran" and turn.startswith("  msg_") and turn.endswith(" completed")


def check(home, tmp_path, env: dict[str, str], argv: list[str]) -> None:
    """A queued prompt runs silently and is logged; a failing turn is reported on stderr."""
    assert run("prompt", "a", "hello", "--no-wait").returncode == 0
    proc = bare(tmp_path, env, argv)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    processed(home)
    assert run("prompt", "a", "again", "--no-wait").returncode == 0  # the script is exhausted
    proc = bare(tmp_path, env, argv)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == "a: ran" and lines[1].endswith(" failed")
    assert lines[2].startswith("    script_exhausted: ")
    assert lines[-1] == LOG_LINE.format(home)
    assert (home / "logs" / "tick.log").read_text().count("\n== ") == 1  # two blocks


def entry(*args: str) -> str:
    proc = run("schedule", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_cron_line_runs_under_cron(home, tmp_path):
    line = entry("cron").rstrip("\n")
    assert f"PYTHONPATH={REPO} {sys.executable} -m holon tick --all --log" in line
    command = line.split(" ", 5)[5]  # after the five schedule fields
    command = command.rpartition(" # holon tick: HOLON_HOME=")[0]  # without the tag
    command = command.replace("\\%", "%")  # as cron hands it to /bin/sh
    check(home, tmp_path, {}, ["/bin/sh", "-c", command])


def systemd_service(text: str) -> tuple[dict[str, str], list[str]]:
    """Environment= and ExecStart= of the printed service, unquoted as systemd does."""
    service = text.split("\n# ", 1)[0]
    env, argv = {}, []
    for line in service.splitlines():
        key, _, value = line.partition("=")
        words = [w.replace("%%", "%") for w in shlex.split(value)]
        if key == "Environment":
            env.update(w.split("=", 1) for w in words)
        elif key == "ExecStart":
            argv = [w.replace("$$", "$") for w in words]
    return env, argv


def test_the_systemd_service_runs_under_systemd(home, tmp_path):
    env, argv = systemd_service(entry("systemd"))
    assert env["HOLON_HOME"] == str(home) and env["PYTHONPATH"] == str(REPO)
    assert argv == [sys.executable, "-m", "holon", "tick", "--all", "--log"]
    check(home, tmp_path, env, argv)


def test_the_launchd_agent_runs_under_launchd(home, tmp_path):
    plist = plistlib.loads(entry("launchd").encode())
    env, argv = plist["EnvironmentVariables"], plist["ProgramArguments"]
    assert env["HOLON_HOME"] == str(home) and plist["StandardErrorPath"].startswith(str(home))
    check(home, tmp_path, env, argv)


def test_without_the_entrys_environment_nothing_would_run(home, tmp_path):
    """Why the entry carries HOLON_HOME: the bare command ticks a default home instead."""
    assert run("prompt", "a", "hello", "--no-wait").returncode == 0
    proc = bare(
        tmp_path,
        {"PYTHONPATH": str(REPO)},
        [sys.executable, "-m", "holon", "tick", "--all", "--log"],
    )
    assert proc.returncode == 0
    assert json.loads(run("status", "a", "--json").stdout)["queue"]["pending"] == 1

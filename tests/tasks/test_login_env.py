"""A login command's environment comes from one login shell per process, run in the sandbox
with its output discarded: a profile that prints adds nothing to tool results, and what it
exports (PATH too) is there."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run, subprocess_env

from holon.home.layout import Home
from holon.sandbox import confine
from holon.tasks.command import loginenv

PROFILE = """\
echo "profile noise on stderr" >&2
echo "profile noise on stdout"
export PROFILE_VAR_39=from-profile
export PATH="$HOME/bin39:$PATH"
export OPENAI_API_KEY=sk-from-the-profile
"""


def _call(home: Path, env: dict, args: dict) -> dict:
    proc = run("tool", "call", str(home), "ExecCommand", "--input", json.dumps(args), env=env)
    assert proc.stdout, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "success", doc
    return doc["result"]


def test_a_printing_profile_adds_nothing_and_its_exports_are_there(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / ".bash_profile").write_text(PROFILE)
    (user / ".profile").write_text(PROFILE)
    env = subprocess_env(HOLON_HOME=str(tmp_path / "hh"), HOME=str(user))
    home = tmp_path / "agent"
    assert run("init", str(home), env=env).returncode == 0
    cmd = 'echo "$PROFILE_VAR_39 ${PATH%%:*} ${OPENAI_API_KEY:-scrubbed}"'
    result = _call(home, env, {"cmd": cmd})
    assert result["stdout_preview"] == f"from-profile {user}/bin39 scrubbed\n", result
    assert result["stderr_preview"] == "", result
    plain = _call(home, env, {"cmd": 'echo "${PROFILE_VAR_39:-unset}"', "login": False})
    assert plain["stdout_preview"] == "unset\n"


def test_the_login_shell_runs_once_per_process_and_a_failing_one_changes_nothing(
    tmp_path, monkeypatch
):
    user = tmp_path / "user"
    user.mkdir()
    (user / ".bash_profile").write_text(PROFILE + 'echo ran >> "$HOME/count"\n')
    monkeypatch.setenv("HOME", str(user))
    home = tmp_path / "agent"
    assert run("init", str(home), env=subprocess_env(HOME=str(user))).returncode == 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def prepared():
        return confine.prepare(Home(home), execution_root=home, workdir=home, scratch=scratch)

    for _ in range(3):
        c = prepared()
        try:
            env = loginenv.environment("/bin/bash", home, c)
        finally:
            c.close()
        assert env["PROFILE_VAR_39"] == "from-profile" and "OPENAI_API_KEY" not in env
    assert (user / "count").read_text() == "ran\n"
    c = prepared()
    try:
        assert loginenv.environment("/bin/false", home, c) == c.env
    finally:
        c.close()

"""`holon tick --all` with broken homes among good ones, and `holon tick --commit`, through the
real entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from helpers import run, subprocess_env

from holon.home.init import init_home


def _git(root, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_a_broken_home_is_reported_and_the_others_still_run(holon_env, script):
    env = subprocess_env(HOLON_MODEL=script({"text": "done"}))
    good = init_home(None, "a")
    gone = init_home(str(holon_env.parent / "elsewhere"), "b")
    shutil.rmtree(gone.root)
    half = holon_env / "agents" / "c" / ".holon"
    half.mkdir(parents=True)
    assert run("prompt", "a", "hello", "--no-wait", env=env).returncode == 0
    ticked = run("tick", "--all", env=env)
    assert ticked.returncode == 1
    assert "a: ran" in ticked.stdout
    assert f"b: missing {gone.root}" in ticked.stderr
    assert f"c: broken {half.parent}" in ticked.stderr and "agent.json" in ticked.stderr
    assert "Traceback" not in ticked.stderr
    doc = json.loads(run("tick", "--all", "--json", env=env).stdout)
    outcomes = {r["agent_id"]: r["outcome"] for r in doc["agents"]}
    # a full pass lists idle agents, one over the due index does not; both report broken homes
    assert outcomes.pop("a", "idle") == "idle" and outcomes == {"b": "missing", "c": "broken"}
    assert not good.queue.pending()


def test_commit_after_a_turn_reads_as_the_agents_history(holon_env, script):
    env = subprocess_env(HOLON_MODEL=script({"text": "Renamed the report.\nDetails follow."}))
    home = init_home(None, "a")
    _git(home.root, "init", "-q")
    _git(home.root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(home.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert run("prompt", "a", "rename it", "--no-wait", env=env).returncode == 0
    ticked = run("tick", "a", "--commit", env=env)
    assert ticked.returncode == 0, ticked.stderr
    assert _git(home.root, "log", "-1", "--format=%s").strip() == "Renamed the report."
    assert _git(home.root, "status", "--porcelain") == ""
    assert run("tick", "a", "--commit", env=env).returncode == 0  # idle: nothing to commit
    assert len(_git(home.root, "log", "--format=%h").split()) == 2


def test_commit_after_turn_can_be_switched_on_in_config(holon_env, script):
    env = subprocess_env(HOLON_MODEL=script({"text": "Configured commit."}))
    home = init_home(None, "a")
    _git(home.root, "init", "-q")
    (holon_env / "config.toml").write_text("[git]\ncommit_after_turn = true\n")
    assert run("prompt", "a", "go", "--no-wait", env=env).returncode == 0
    assert run("tick", "a", env=env).returncode == 0
    assert _git(home.root, "log", "-1", "--format=%s").strip() == "Configured commit."
    assert os.path.exists(home.root / ".holon" / ".gitignore")


def test_one_agent_that_cannot_be_ticked_does_not_stop_the_others(holon_env, script, monkeypatch):
    from scenario_helpers import cli

    from holon.agent import admission
    from holon.runtime import tick as runtime_tick

    monkeypatch.setenv("HOLON_MODEL", script({"text": "fine"}))
    homes = [init_home(None, name) for name in ("a", "b", "c")]
    for home in homes:
        admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body("go"))
    real = runtime_tick.tick

    def flaky(home, **kw):
        if home.agent_id == "b":
            raise RuntimeError("disk on fire")
        return real(home, **kw)

    monkeypatch.setattr(runtime_tick, "tick", flaky)
    code, out, err = cli("tick", "--all")
    assert code == 1
    assert out.splitlines()[0] == "a: ran" and "c: ran" in out
    assert "b: error" in err and "internal_error: RuntimeError: disk on fire" in err
    assert not homes[0].queue.pending() and not homes[2].queue.pending()

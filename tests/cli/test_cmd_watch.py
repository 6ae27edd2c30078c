"""`holon watch`: usage errors in process; one short real run in a subprocess that picks up a
queued prompt, reports the turn, and exits 0 on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from cmd_checks import fails
from helpers import subprocess_env, wait_for

from holon.cli.watch import watch_cmd
from holon.store import jsonl


def test_needs_an_agent_or_all(agent):
    assert watch_cmd.name == "watch"
    fails("watch", code=2, kind="missing_agent")
    fails("watch", "nobody", code=2, kind="unknown_agent")
    fails("watch", "a", "nobody", code=2, kind="unknown_agent")


def _watch(*args: str, env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "holon", "watch", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(proc: subprocess.Popen) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"watch did not exit on SIGTERM\n{out}\n{err}") from None
    return proc.returncode, out, err


def test_watch_runs_a_queued_prompt_and_exits_on_sigterm(agent, tmp_path, monkeypatch):
    from holon.ops import prompt

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "watched"}) + "\n")
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")  # a prompt needs a model to admit
    env = subprocess_env(HOLON_MODEL=f"scripted/{script}")
    proc = _watch("a", env=env)
    try:
        queued = prompt.prompt(agent, "hello", wait=False, model=None)
        wait_for(
            lambda: any(b.get("text") == "watched" for b in jsonl.read(agent.briefs)), timeout=15
        )
    finally:
        code, out, err = _stop(proc)
    assert code == 0, err
    assert out.splitlines() == [f"a: {queued['message_id']} completed"]
    assert "Traceback" not in err and agent.queue.depth() == 0


def test_quiet_all_prints_nothing(agent, tmp_path, monkeypatch):
    from holon.ops import prompt

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "quiet"}) + "\n")
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")
    proc = _watch("--all", "--quiet", env=subprocess_env(HOLON_MODEL=f"scripted/{script}"))
    try:
        prompt.prompt(agent, "hello", wait=False, model=None)
        wait_for(
            lambda: any(b.get("text") == "quiet" for b in jsonl.read(agent.briefs)), timeout=15
        )
    finally:
        code, out, err = _stop(proc)
    assert (code, out) == (0, ""), err


def test_all_picks_up_an_agent_created_after_it_started(holon_env, tmp_path, monkeypatch):
    from holon.home.init import init_home
    from holon.ops import prompt

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "newcomer"}) + "\n")
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")
    proc = _watch("--all", "--shard", "0/1", env=subprocess_env(HOLON_MODEL=f"scripted/{script}"))
    try:
        wait_for(lambda: (holon_env / "due").is_dir(), timeout=15)
        late = init_home(None, "late")
        queued = prompt.prompt(late, "hello", wait=False, model=None)
        wait_for(
            lambda: any(b.get("text") == "newcomer" for b in jsonl.read(late.briefs)), timeout=15
        )
    finally:
        code, out, err = _stop(proc)
    assert code == 0, err
    assert out.splitlines() == [f"late: {queued['message_id']} completed"]


def test_a_start_line_and_the_reason_of_a_failed_turn(agent, tmp_path, monkeypatch):
    from holon.ops import prompt

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"error": {"kind": "server_error"}}) + "\n")
    monkeypatch.setenv("HOLON_MODEL", f"scripted/{script}")
    proc = _watch("a", env=subprocess_env(HOLON_MODEL=f"scripted/{script}"))
    try:
        assert proc.stderr.readline() == "holon watch: watching a; Ctrl-C to stop\n"
        queued = prompt.prompt(agent, "hello", wait=False, model=None)
        wait_for(lambda: any(b.get("kind") == "failure" for b in jsonl.read(agent.briefs)))
    finally:
        code, out, err = _stop(proc)
    assert code == 0, err
    (line,) = out.splitlines()
    assert line.startswith(f"a: {queued['message_id']} failed: provider request failed"), line

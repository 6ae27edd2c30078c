"""The notify hook: `[notify]` runs the operator's command once per new record at its levels,
detached from the turn (a failing or hanging hook changes neither its exit code nor its end), with
a scrubbed environment, and at least once across a crash (the cursor moves after the run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run, subprocess_env, wait_for

from holon import config
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.feed import notify
from holon.store import jsonl

NOTIFY = {
    "text": "",
    "tool_calls": [
        {
            "name": "NotifyOperator",
            "arguments": {"text": "Approve the deploy?", "visibility": "action_required"},
        }
    ],
}


@pytest.fixture
def hook(tmp_path, holon_env):
    """Configure [notify] with a script that appends its stdin (one JSON line) to a file; it
    first waits for `gate` when the file `hold` exists, and exits 1 when `fail` exists."""
    out = tmp_path / "hooked.jsonl"
    script = tmp_path / "hook.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"d={tmp_path}\n"
        'if [ -e "$d/hold" ]; then echo started >> "$d/started";'
        ' while [ ! -e "$d/gate" ]; do sleep 0.05; done; fi\n'
        f"cat >> {out}\n"
        'env > "$d/env.txt"\n'
        'if [ -e "$d/fail" ]; then echo "no mail server" >&2; exit 1; fi\n'
    )
    script.chmod(0o755)

    def configure(levels=("action_required",), timeout_s=30) -> Path:
        holon_env.mkdir(parents=True, exist_ok=True)
        (holon_env / "config.toml").write_text(
            f'[notify]\ncommand = ["{script}"]\nlevels = {json.dumps(list(levels))}\n'
            f"timeout_s = {timeout_s}\n"
        )
        config.reset()
        return out

    return configure


def hooked(out: Path, n: int = 1) -> list[dict]:
    def ready():
        if not out.exists():
            return None
        lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
        return lines if len(lines) >= n else None

    return wait_for(ready, timeout=30)


def failures(home) -> list[dict]:
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == "notify_hook_failed"]


def test_a_notify_operator_call_reaches_the_hook_during_the_prompt(agent, script, hook):
    out = hook()
    model = script(NOTIFY, {"text": "Waiting for you."})
    proc = run(
        "prompt", "a", "deploy", "--model", model, env=subprocess_env(MY_API_KEY="sk-secret")
    )
    assert proc.returncode == 0, proc.stderr
    [record] = hooked(out)
    assert record["visibility"] == "action_required" and record["summary"] == "Approve the deploy?"
    assert record["agent_id"] == "a" and record["source_event_kind"] == "brief_recorded"
    feed = run("feed", "a", "--jsonl").stdout.splitlines()
    assert json.loads(feed[0])["event_seq"] == record["event_seq"]
    env = (out.parent / "env.txt").read_text()
    assert "MY_API_KEY" not in env and "HOLON_AGENT_ID=a" in env


def test_a_failed_turn_reaches_a_hook_for_turn_results(agent, script, hook):
    out = hook(levels=["turn_result"])
    model = script({"error": {"status": 401, "kind": "auth", "message": "bad key"}})
    proc = run("prompt", "a", "go", "--model", model)
    assert proc.returncode == 1
    [record] = hooked(out)
    assert record["title"] == "Turn result (failure)" and "bad key" in record["body"]


def test_a_hook_that_hangs_or_fails_leaves_the_turn_alone(agent, script, hook, tmp_path):
    out = hook(timeout_s=60)
    (tmp_path / "hold").touch()
    (tmp_path / "fail").touch()
    model = script(NOTIFY, {"text": "Waiting."})
    proc = run("prompt", "a", "deploy", "--model", model)
    # the prompt ended, with its own exit code, while the hook still waits for the gate
    assert proc.returncode == 0 and proc.stdout == "Waiting.\n"
    wait_for(lambda: (tmp_path / "started").exists(), timeout=30)
    assert not out.exists()
    (tmp_path / "gate").touch()
    hooked(out)
    [failure] = wait_for(lambda: failures(agent), timeout=30)
    assert failure["problem"] == "exit status 1: no mail server"


def test_a_hook_past_its_timeout_is_stopped_and_reported(agent, hook, tmp_path):
    hook(timeout_s=0.2)
    (tmp_path / "hold").touch()
    Agent(agent).brief("ack", "need you", visibility="action_required")
    assert notify.deliver(agent) == 1
    [failure] = failures(agent)
    assert failure["problem"] == "timed out after 0.2 s (stopped)"
    assert notify.pending(agent, notify.settings()) == []  # reported once, not retried forever


def test_each_record_runs_the_hook_once_and_a_crash_runs_it_again(agent, hook):
    out = hook()
    a = Agent(agent)
    a.brief("ack", "one", visibility="action_required")
    a.brief("result", "not at this level")
    assert notify.deliver(agent) == 1
    assert notify.deliver(agent) == 0
    a.brief("ack", "two", visibility="action_required")
    cursor = json.loads(agent.notify_cursor.read_text())
    notify.deliver(agent)
    agent.notify_cursor.write_text(json.dumps(cursor))  # a crash before the cursor moved
    notify.deliver(agent)
    assert [r["summary"] for r in hooked(out, 3)] == ["one", "two", "two"]


def test_a_first_cursor_skips_old_records(agent, hook, monkeypatch):
    out = hook()
    Agent(agent).brief("ack", "from last week", visibility="action_required")
    monkeypatch.setattr(notify, "BACKLOG_S", -60)  # everything already written counts as old
    assert notify.deliver(agent) == 0 and not out.exists()
    monkeypatch.setattr(notify, "BACKLOG_S", 86400)
    Agent(agent).brief("ack", "now", visibility="action_required")
    assert notify.deliver(agent) == 1


def test_kick_without_a_record_to_deliver_only_moves_the_cursor(agent, hook, monkeypatch):
    out = hook()
    a = Agent(agent)
    a.brief("result", "only a turn result")
    notify.kick(agent)  # a first cursor is written at once
    last = jsonl.last(agent.events)["event_seq"]
    assert json.loads(agent.notify_cursor.read_text())["delivered_seq"] == last
    a.event("timer_fired", timer_id="t")
    notify.kick(agent)  # less than a stride of new events: the cursor stays (no fsync per kick)
    assert json.loads(agent.notify_cursor.read_text())["delivered_seq"] == last
    monkeypatch.setattr(notify, "CURSOR_STRIDE", 1)
    notify.kick(agent)
    assert json.loads(agent.notify_cursor.read_text())["delivered_seq"] == last + 1
    assert not out.exists() and notify.pending(agent, notify.settings()) == []


@pytest.mark.parametrize(
    "table",
    [
        "notify = 3",
        "[notify]\ncommand = 'notify-send hi'",
        "[notify]\ncommand = []",
        "[notify]\ncommand = ['x']\nlevels = ['loud']",
        "[notify]\ncommand = ['x']\ntimeout_s = 0",
        "[notify]\ncommand = ['x']\nshell = true",
    ],
)
def test_a_bad_notify_table_is_invalid_config(holon_env, table):
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(table + "\n")
    config.reset()
    with pytest.raises(UsageError) as exc:
        notify.settings()
    assert exc.value.kind == "invalid_config" and "[notify]" in exc.value.hint


def test_no_notify_table_no_hook(holon_env):
    config.reset()
    assert notify.settings() is None


def test_a_notify_operator_call_reaches_the_hook_before_the_turn_ends(agent, script, hook):
    """A long turn does not hold its question back: the next round's command sees the hook's
    output while the turn is still running."""
    out = hook()
    wait = f"for i in $(seq 1 600); do [ -s {out} ] && break; sleep 0.05; done; test -s {out}"
    model = script(
        NOTIFY,
        {"text": "", "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": wait}}]},
        {"text": "Done."},
    )
    proc = run("prompt", "a", "deploy", "--model", model)
    assert proc.returncode == 0, proc.stderr
    results = [e["data"] for e in jsonl.read(agent.transcript) if e["kind"] == "tool_result"]
    assert results[-1]["tool_name"] == "ExecCommand" and results[-1]["status"] == "success"
    assert "exit 0" in results[-1]["rendered"], results[-1]["rendered"]


def test_a_cursor_that_cannot_be_read_starts_again_as_a_first_one(agent, hook):
    out = hook()
    agent.notify_cursor.write_text('{"delivered_seq": "x"')
    Agent(agent).brief("ack", "still reaches you", visibility="action_required")
    assert notify.deliver(agent) == 1
    assert [r["summary"] for r in hooked(out)] == ["still reaches you"]
    assert isinstance(json.loads(agent.notify_cursor.read_text())["delivered_seq"], int)

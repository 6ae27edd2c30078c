"""A tick killed while it defers a message (between "the provider failed" and "the message is back
in the queue") loses nothing and repeats nothing: the next tick finishes the deferral or redelivers
the message, and its turn resumes without running its tool call again."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scenario_helpers import T0, set_now, subprocess_env

from holon.agent import admission
from holon.agent.handle import Agent
from holon.runtime.tick import tick
from holon.store import jsonl

DOWN = [{"error": {"status": 503, "message": "upstream unavailable"}}] * 3

KILLED_TICK = r"""
import os, sys
from holon.home.registry import resolve
from holon.runtime import tick as tick_module
from holon.runtime.turn import fate
from holon.store.queue import Queue

def die(*_args, **_kwargs):
    os._exit(137)

step = sys.argv[1]
if step == "failure_known":  # the turn came back deferred; nothing about it is written yet
    fate.defer = die
elif step == "event_logged":  # message_deferred is in the ledger; the queue is untouched
    Queue.defer = die
elif step == "record_rewritten":  # cur/<name> carries its not-before; it is not back in new/
    rewrite = Queue.rewrite_cur
    def rewrite_then_die(self, name, record):
        rewrite(self, name, record)
        if record.get("not_before"):
            die()
    Queue.rewrite_cur = rewrite_then_die
elif step == "requeued":  # back in new/ with its not-before; the state still says running
    defer = Queue.defer
    def defer_then_die(self, *args):
        defer(self, *args)
        die()
    Queue.defer = defer_then_die
tick_module.tick(resolve("a"))
"""


@pytest.mark.parametrize(
    "step, redelivered",
    [
        ("failure_known", True),
        ("event_logged", True),
        ("record_rewritten", False),
        ("requeued", False),
    ],
)
def test_a_kill_while_deferring_loses_and_repeats_nothing(
    agent, script, tmp_path, monkeypatch, step, redelivered
):
    monkeypatch.setenv("HOLON_RETRY_BASE_S", "10")
    set_now(monkeypatch, T0)
    fx = tmp_path / "fx"
    write = {"cmd": f"echo once >> {fx}", "login": False}
    model = script(
        {"text": "writing", "tool_calls": [{"name": "ExecCommand", "arguments": write}]},
        *DOWN,
        *DOWN,
        {"text": "done"},
    )
    env = admission.admit(
        agent, "cli_prompt", "operator_prompt", admission.text_body("go"), model_ref=model
    )
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_TICK, step], env=subprocess_env(), timeout=120
    )
    assert killed.returncode == 137
    assert fx.read_text() == "once\n" and agent.queue.depth() == 1  # nothing lost

    first = tick(agent)  # the provider is still down
    assert first.recovered == ([env["id"]] if redelivered else [])
    if redelivered:  # redelivered at once; the turn resumes and is deferred again
        assert [t["status"] for t in first.turns] == ["deferred"]
    else:  # the deferral was finished: nothing runs before its time
        assert first.turns == [] and agent.queue.in_progress() == []
    statuses = []
    for _ in range(4):
        ((_name, at),) = agent.queue.deferred(now=0)
        set_now(monkeypatch, at)
        statuses += [t["status"] for t in tick(agent).turns]
        if statuses[-1] == "completed":
            break
    assert statuses[-1] == "completed" and statuses.count("completed") == 1
    assert fx.read_text() == "once\n"  # the tool call ran once
    messages = [e for e in jsonl.read(agent.transcript) if e["kind"] == "message"]
    assert [m["message_id"] for m in messages] == [env["id"]]
    assert [b["kind"] for b in jsonl.read(agent.briefs)] == ["result"]
    assert agent.queue.depth() == 0 and agent.queue.dead_letters() == []
    state = Agent(agent).state()
    assert state.inflight == {} and state.status.value == "awake_idle"

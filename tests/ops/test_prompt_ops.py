"""holon.ops.prompt: prompt-and-wait, settle_message from the ledgers, one-shot runs."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from holon import paths
from holon.agent import control
from holon.agent.handle import Agent
from holon.errors import NotRunnable, UsageError
from holon.home import registry
from holon.home.layout import Home
from holon.ops import prompt as operator
from holon.runtime.tick import tick
from holon.store import jsonl
from holon.tasks import store


def test_no_wait_only_enqueues_and_the_message_carries_the_model(agent, script):
    model = script({"text": "x"})
    out = operator.prompt(agent, "later", wait=False, model=model, priority="background")
    assert out == {"agent_id": "a", "message_id": out["message_id"], "status": "queued"}
    (queued,) = agent.queue.peek_all()
    assert queued["id"] == out["message_id"] and queued["priority"] == "background"
    assert queued["delivery_surface"] == "cli_prompt" and queued["model_ref"] == model


def test_without_a_model_anywhere_even_no_wait_is_refused(agent, script, monkeypatch):
    with pytest.raises(UsageError) as err:
        operator.prompt(agent, "later", wait=False, model=None)
    assert err.value.kind == "no_model_configured" and "holon model set a" in err.value.hint
    monkeypatch.setenv("HOLON_MODEL", script({"text": "x"}))
    operator.prompt(agent, "later", wait=False, model=None)  # the default will do
    (queued,) = agent.queue.peek_all()
    assert queued["model_ref"] is None  # not chosen for it: resolved when it runs


def test_waiting_without_a_model_is_refused_before_enqueueing(agent):
    with pytest.raises(UsageError) as err:
        operator.prompt(agent, "hi", wait=True, model=None)
    assert err.value.kind == "no_model_configured" and "--model" in err.value.hint
    assert agent.queue.pending() == []


def test_prompt_waits_for_its_own_turn(agent, script):
    model = script(
        {"text": "answer one"},
        {"text": "answer two", "usage": {"input_tokens": 3, "output_tokens": 1}},
    )
    queued = operator.prompt(agent, "first", wait=False, model=model)
    out = operator.prompt(agent, "second", wait=True, model=model)
    assert out["status"] == "completed" and out["exit_code"] == 0
    assert out["final_text"] == "answer two" and out["message_id"] != queued["message_id"]
    assert out["token_usage"]["total_tokens"] == 4 and out["agent_id"] == "a"
    assert not agent.queue.pending() and not agent.queue.in_progress()


def test_failed_turn_exits_1_with_its_artifact(agent, script):
    out = operator.prompt(agent, "x", wait=True, model=script({"error": {"status": 401}}))
    assert out["status"] == "failed" and out["exit_code"] == 1
    assert out["failure_artifact"]["kind"] == "auth"


def test_stopped_agent_refuses_and_paused_agent_keeps_the_prompt(agent, script):
    control.stop(agent)
    with pytest.raises(NotRunnable):
        operator.prompt(agent, "x", wait=True, model=script({"text": "no"}))
    control.resume(agent)
    control.pause(agent)
    out = operator.prompt(agent, "x", wait=True, model=script({"text": "later"}))
    assert (out["status"], out["exit_code"]) == ("paused", 3)
    assert "holon resume a" in out["hint"] and len(agent.queue.pending()) == 1


def test_settle_message_reads_a_turn_another_tick_ran(agent, script):
    model = script({"text": "done elsewhere"}, {"error": {"status": 400}})
    first = operator.prompt(agent, "one", wait=False, model=model)
    tick(agent, model=model)
    out = operator.settle_message(Agent(agent), first["message_id"], model)
    assert out == {
        "agent_id": "a",
        "message_id": first["message_id"],
        "status": "completed",
        "final_text": "done elsewhere",
        "token_usage": None,
        "provider_attempt_timeline": None,
        "exit_code": 0,
    }
    second = operator.prompt(agent, "two", wait=False, model=model)
    tick(agent, model=model)
    out = operator.settle_message(Agent(agent), second["message_id"], model)
    assert out["status"] == "failed" and out["exit_code"] == 1
    assert out["failure_artifact"]["category"] == "unknown"
    assert out["failure_artifact"]["summary"] == out["final_text"]


def test_settle_message_of_an_unknown_message_is_pending(agent, script):
    out = operator.settle_message(Agent(agent), "msg_never", script({"text": "x"}))
    assert (out["status"], out["exit_code"]) == ("pending", 1) and "holon status" in out["hint"]


def test_run_once_uses_a_private_home_and_removes_it(script):
    out = operator.run_once(
        "hello", agent_id=None, create=False, keep=False, model=script({"text": "one shot"})
    )
    assert out["status"] == "completed" and out["final_text"] == "one shot"
    assert out["agent_id"] == "run" and "home" not in out
    assert list(paths.runs_dir().iterdir()) == []  # made in $HOLON_HOME/run/, then removed
    assert registry.load() == {}


def test_run_once_keep_returns_the_private_home(script):
    out = operator.run_once(
        "hello", agent_id=None, create=False, keep=True, model=script({"text": "kept"})
    )
    root = Path(out["home"])
    try:
        home = Home(root)
        assert home.exists() and home.agent_id == "run"
        ident = Agent(home).identity()
        assert (ident["kind"], ident["visibility"]) == ("named", "private")  # spec routing rules
        (msg,) = list(jsonl.read(home.messages))
        assert msg["delivery_surface"] == "run_once"
        assert registry.load() == {}
    finally:
        shutil.rmtree(root.parent)


def test_run_once_with_a_named_agent(script):
    with pytest.raises(UsageError) as err:
        operator.run_once(
            "hi", agent_id="newbie", create=False, keep=False, model=script({"text": "x"})
        )
    assert err.value.kind == "unknown_agent" and "--create-agent" in err.value.hint
    out = operator.run_once(
        "hi", agent_id="newbie", create=True, keep=False, model=script({"text": "made"})
    )
    assert out["final_text"] == "made" and out["agent_id"] == "newbie"
    assert registry.resolve("newbie").exists()


def test_run_once_keeps_the_home_when_an_error_ends_the_wait(script, tmp_path, monkeypatch):
    """Every way out of run_once checks for running tasks before it removes the home."""
    runs = paths.runs_dir()  # the temporary agent lives in $HOLON_HOME/run/
    exec_ = {"cmd": "sleep 1; echo done", "yield_time_ms": 50, "login": False}
    model = script(
        {"tool_calls": [{"name": "ExecCommand", "arguments": exec_}]}, {"text": "started"}
    )

    def broken_wait(home, task_ids):
        raise RuntimeError("the wait broke")

    monkeypatch.setattr(operator, "_await", broken_wait)
    notices: list[str] = []
    with pytest.raises(RuntimeError):
        operator.run_once(
            "go", agent_id=None, create=False, keep=False, model=model, on_kept=notices.append
        )
    (tmp,) = runs.iterdir()
    home = Home(tmp / "agent")
    (record,) = store.all_records(home)
    assert record["status"] == "running" and home.exists()
    (notice,) = notices
    assert notice.startswith(f"kept the temporary agent at {home.root}: task {record['id']} is")
    assert f"then remove {tmp}" in notice
    for _ in range(100):  # let the task end into the kept home
        if any(m["kind"] == "task_result" for m in home.queue.peek_all()):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the task's result never reached the kept home")

"""holon.runtime.watch.Watcher in process: due checks, wait timeouts, the loop and its stop flag."""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest
from helpers import wait_for
from scenario_helpers import T0, set_now

from holon.agent import admission, nextdue, timers
from holon.home.init import init_home
from holon.runtime import watch
from holon.runtime.watch import Watcher
from holon.store import jsonl


def _prompt(home, text: str) -> dict:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def _results(home) -> list[str]:
    return [b["text"] for b in jsonl.read(home.briefs) if b["kind"] == "result"]


def test_tick_due_ticks_only_homes_with_due_work(agent, script):
    other = init_home(None, "b")
    _prompt(agent, "hello")
    reports = []
    w = Watcher(lambda: [agent, other], model=script({"text": "hi"}), on_report=reports.append)
    w.tick_due()
    assert [r["agent_id"] for r in reports] == ["a"]
    assert reports[0]["outcome"] == "ran" and reports[0]["turns"][0]["final_text"] == "hi"
    assert not other.transcript.exists()
    reports.clear()
    w.tick_due()
    assert reports == []  # nothing due any more


def test_tick_due_stops_between_agents(agent):
    _prompt(agent, "hello")
    w = Watcher(lambda: [agent])
    w.stop.set()
    w.tick_due()
    assert agent.queue.pending()  # untouched


def test_timeout_follows_the_soonest_next_due(agent, monkeypatch):
    set_now(monkeypatch, T0)
    w = Watcher(lambda: [agent])
    assert w._timeout() == watch.MAX_WAIT_S  # nothing scheduled
    timers.create(agent, after="300ms")
    nextdue.refresh(agent)
    assert w._timeout() == pytest.approx(0.3)
    set_now(monkeypatch, T0 + 10)
    assert w._timeout() == 0.05  # overdue: a short wait, never zero
    set_now(monkeypatch, T0 - 3600)
    assert w._timeout() == watch.MAX_WAIT_S


def test_paths_are_the_queue_and_task_directories(agent):
    w = Watcher(lambda: [agent])
    assert str(agent.queue.new) in w._paths()


def test_run_without_watchfiles_polls_until_stopped(agent, script, monkeypatch):
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # import fails: the polling loop
    _prompt(agent, "first")
    reports = []
    w = Watcher(
        lambda: [agent], model=script({"text": "one"}, {"text": "two"}), on_report=reports.append
    )
    thread = threading.Thread(target=w.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(reports) == 1, timeout=5)
        _prompt(agent, "second")
        wait_for(lambda: len(reports) == 2, timeout=5)
    finally:
        w.stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()
    assert [r["turns"][0]["final_text"] for r in reports] == ["one", "two"]


def test_run_with_watchfiles_picks_up_a_message_quickly(agent, script):
    pytest.importorskip("watchfiles")
    w = Watcher(lambda: [agent], model=script({"text": "seen"}))
    thread = threading.Thread(target=w.run, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)
        t0 = time.monotonic()
        _prompt(agent, "hello")
        wait_for(lambda: _results(agent) == ["seen"], timeout=5)
        assert time.monotonic() - t0 < 4
    finally:
        w.stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_signals_only_set_the_stop_flag(agent):
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    w = Watcher(lambda: [agent])
    try:
        w.install_signals()
        signal.raise_signal(signal.SIGTERM)
        assert w.stop.is_set()
        w.stop.clear()
        signal.raise_signal(signal.SIGINT)
        assert w.stop.is_set()
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def test_index_watcher_sees_what_arrived_before_its_watcher_was_armed(holon_env, script):
    """An agent created and prompted while `watch --all` made its first pass (before the file
    watcher existed) raised no event: the first wake-up after arming passes again and runs it."""
    model = script({"text": "late one"})
    passes = []
    late = []

    class Slow(watch.IndexWatcher):
        def sweep(self):
            passes.append(time.monotonic())
            out = super().sweep()
            if len(passes) == 1:  # during the first pass, after its listing
                home = init_home(None, "late")
                _prompt(home, "hello")
                late.append(home)
            return out

    w = Slow(model=model, on_report=lambda r: None)
    thread = threading.Thread(target=w.run)
    thread.start()
    try:
        wait_for(lambda: late and _results(late[0]) == ["late one"], timeout=20)
    finally:
        w.stop.set()
        thread.join(timeout=10)
    assert len(passes) >= 2

"""Turns under the console: Ctrl-C interrupts the running turn as it interrupts `holon prompt`
(the message resumes at the next tick) and never a background task; while another process holds
the agent's turn lock the console only admits and follows, then runs the turn once it is free."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from pilot import shown, submit, until
from textual.widgets import Input, RichLog, Static

from holon.agent.due import due_reasons
from holon.console.app import ConsoleApp
from holon.console.composer import Composer
from holon.console.overlays import TasksOverlay
from holon.console.runner import reap_left
from holon.procs import supervises
from holon.store import jsonl
from holon.store.locks import FileLock
from holon.tasks import store
from holon.tasks.command import spawn


def run(app: ConsoleApp, scenario) -> None:
    async def main() -> None:
        async with app.run_test(size=(110, 36)) as pilot:
            await scenario(pilot)
            if app.is_running:
                await until(pilot, lambda: not app.runner.running)

    asyncio.run(main())


def exec_call(cmd: str, yield_ms: int) -> dict:
    args = {"cmd": cmd, "yield_time_ms": yield_ms, "login": False}
    return {"name": "ExecCommand", "arguments": args}


@pytest.fixture
def stop_tasks(agent):
    """Every task process a test leaves behind is stopped afterwards."""
    yield
    for record in store.all_records(agent):
        if record.get("status") not in store.TERMINAL:
            spawn.kill_group(int(record.get("pid") or 0), grace=0.5)


def test_ctrl_c_interrupts_the_turn_and_never_the_background_task(
    agent, script, tmp_path, stop_tasks
):
    started, gate = tmp_path / "started", tmp_path / "gate"
    background = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    foreground = f"touch {started}; while [ ! -e {gate} ]; do sleep 0.05; done"
    model = script(
        {"text": "starting", "tool_calls": [exec_call(background, 50)]},
        {"text": "now waiting", "tool_calls": [exec_call(foreground, 60_000)]},
        {"text": "never"},
    )
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "go")
        await until(pilot, started.exists)
        assert app.working()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: "interrupted: the turn resumes at the next tick" in shown(app))
        assert not app.runner.running
        header = app.query_one("#header", Static)
        await until(pilot, lambda: str(header.render()).endswith("· idle"))

    run(app, scenario)
    (task,) = store.all_records(agent)
    assert task["status"] == "running"
    os.killpg(int(task["pid"]), 0)  # its process group is alive (raises if it is gone)
    assert supervises(task["supervisor_pid"], task["id"])
    assert "interrupted_messages" in due_reasons(agent)  # the next tick resumes it
    gate.touch()


def test_while_another_process_ticks_the_console_only_admits_and_follows(agent, script):
    app = ConsoleApp(agent, model=script({"text": "after the other tick"}))
    other = FileLock(agent.turn_lock)  # a `holon watch` or cron tick holding the agent
    agent.locks.mkdir(parents=True, exist_ok=True)
    other.acquire()

    async def scenario(pilot):
        await submit(pilot, "queued behind")
        working = app.query_one("#working", Static)
        await until(pilot, lambda: "ticked by another process" in str(working.render()))
        polls = app.polls
        await until(pilot, lambda: app.polls >= polls + 5)
        assert app.runner.ticks_started == 0  # no tick of ours while the lock is held
        assert [m["body"]["text"] for m in jsonl.read(agent.messages)] == ["queued behind"]
        other.release()
        await until(pilot, lambda: "after the other tick" in shown(app))

    try:
        run(app, scenario)
    finally:
        other.release()


def test_quitting_leaves_a_running_turn_to_finish_on_its_own(agent, script, tmp_path):
    started, gate = tmp_path / "started", tmp_path / "gate"
    wait = f"touch {started}; while [ ! -e {gate} ]; do sleep 0.05; done"
    model = script(
        {"text": "", "tool_calls": [exec_call(wait, 60_000)]},
        {"text": "finished without the console"},
    )
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "go")
        await until(pilot, started.exists)
        await pilot.press("ctrl+q")

    asyncio.run(_quit_run(app, scenario))
    assert app.return_code == 0 and isinstance(app.detached, int)
    gate.touch()
    deadline = time.monotonic() + 20
    while not any(
        b.get("text") == "finished without the console" for b in jsonl.read(agent.briefs)
    ):
        assert time.monotonic() < deadline, "the turn did not finish"
        time.sleep(0.05)
    deadline = time.monotonic() + 20
    while app.detached in reap_left():  # the tick ends by itself once its turn is done
        assert time.monotonic() < deadline, "the tick did not end"
        time.sleep(0.05)


async def _quit_run(app, scenario):
    async with app.run_test(size=(110, 36)) as pilot:
        await scenario(pilot)


def test_the_tasks_overlay_shows_output_and_sends_input_to_an_interactive_task(
    agent, script, stop_tasks
):
    reader = 'echo ready; read line; echo "got $line"'
    call = exec_call(reader, 50)
    call["arguments"]["accepts_input"] = True
    app = ConsoleApp(agent, model=script({"text": "started", "tool_calls": [call]}, {"text": "ok"}))

    async def scenario(pilot):
        await submit(pilot, "start it")
        await until(pilot, lambda: store.all_records(agent) and not app.working())
        await pilot.press("f3")
        overlay = await until(pilot, lambda: isinstance(app.overlay, TasksOverlay) and app.overlay)
        output = overlay.query_one("#task-output", RichLog)
        text = lambda: "\n".join(line.text for line in output.lines)  # noqa: E731
        await until(pilot, lambda: "ready" in text())
        await pilot.press("enter")  # on the picked task: its input line takes the keyboard
        assert isinstance(app.focused, Input)
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: "got hello" in text())
        assert app.query_one(Composer).text == ""  # the line went to the task, not the composer
        await pilot.press("escape")
        await until(pilot, lambda: app.overlay is None)
        assert isinstance(app.focused, Composer)

    run(app, scenario)


def test_a_finished_task_is_answered_without_a_new_prompt(agent, script, tmp_path, stop_tasks):
    gate = tmp_path / "gate"
    job = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo job done"
    model = script(
        {"text": "started", "tool_calls": [exec_call(job, 50)]},
        {"text": "the job runs in the background"},
        {"text": "the job has finished"},
    )
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "run the job")
        await until(pilot, lambda: "the job runs in the background" in shown(app))
        await until(pilot, lambda: not app.working())
        assert app.runner.ticks_started == 1
        gate.touch()  # the task ends; its result wakes the agent, and the console ticks it
        await until(pilot, lambda: "the job has finished" in shown(app) and not app.working())
        assert app.runner.ticks_started == 2

    run(app, scenario)
    prompts = [m for m in jsonl.read(agent.messages) if m["kind"] == "operator_prompt"]
    assert [m["body"]["text"] for m in prompts] == ["run the job"]


def test_after_ctrl_c_a_finished_task_waits_for_the_next_prompt(
    agent, script, tmp_path, stop_tasks
):
    started, gate = tmp_path / "started", tmp_path / "gate"
    background = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    foreground = f"touch {started}; while [ ! -e {gate} ]; do sleep 0.05; done"
    model = script(
        {"text": "starting", "tool_calls": [exec_call(background, 50)]},
        {"text": "now waiting", "tool_calls": [exec_call(foreground, 60_000)]},
        {"text": "never"},
    )
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "go")
        await until(pilot, started.exists)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: "interrupted: the turn resumes" in shown(app))
        gate.touch()  # the background task ends: its result is due work
        await until(pilot, lambda: "queued_messages" in due_reasons(agent))
        polls = app.polls
        await until(pilot, lambda: app.polls >= polls + 10)  # ten looks at due work later
        assert app.runner.ticks_started == 1 and "never" not in shown(app)

    run(app, scenario)
    assert "interrupted_messages" in due_reasons(agent)  # left for the operator's next prompt


def test_the_tasks_overlay_keeps_the_place_scrolled_back_to_in_a_finished_output(
    agent, script, stop_tasks
):
    model = script(
        {"text": "started", "tool_calls": [exec_call("sleep 0.3; seq 1 300", 50)]},
        {"text": "it runs"},
        {"text": "it finished"},
    )
    app = ConsoleApp(agent, model=model)

    async def scenario(pilot):
        await submit(pilot, "count")
        await until(pilot, lambda: "it finished" in shown(app) and not app.working())
        await pilot.press("f3")
        overlay = await until(pilot, lambda: isinstance(app.overlay, TasksOverlay) and app.overlay)
        output = overlay.query_one("#task-output", RichLog)
        await until(pilot, lambda: any(line.text == "300" for line in output.lines))
        await until(pilot, lambda: output.scroll_y == output.max_scroll_y > 0)
        await pilot.press("pageup")
        await until(pilot, lambda: output.scroll_y < output.max_scroll_y)
        back_at = output.scroll_y
        for _ in range(2):  # the overlay's refreshes, as its timer runs them
            overlay._refresh_output()
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert output.scroll_y == back_at

    run(app, scenario)


def test_a_tick_that_fails_leaves_due_work_for_longer_each_time(agent, holon_env):
    """Due work and a fault that fails every tick (a config.toml that does not parse): the
    console's ticks back off (5 s, then 10 s, ...) instead of starting one at every step."""
    from helpers import wait_for

    from holon.console.runner import TurnRunner

    (holon_env / "config.toml").write_text("[broken\n")
    agent.wake_hint.write_text("{}")
    runner = TurnRunner(agent)
    for n, wait in ((1, 5.0), (2, 10.0)):
        runner.retry_at = 0.0  # the last wait is over
        runner.step()
        assert runner.ticks_started == n
        started = time.monotonic()
        end = wait_for(runner.step, timeout=120)
        ended = time.monotonic()
        assert end.exit_code != 0 and due_reasons(agent)
        assert runner.retry_at - ended <= wait <= runner.retry_at - started
        assert runner.step() is None and runner.ticks_started == n  # not again at once

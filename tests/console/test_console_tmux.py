"""`holon console` in a real terminal (tmux), as a user would: type a prompt, see the scripted
reply, open the transcript overlay and close it with Esc, `/quit` while a background task runs;
the task still runs afterwards and the prompt was admitted once."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable

import pytest
from helpers import holon_cmd, subprocess_env

from holon.home.init import init_home
from holon.procs import supervises
from holon.store import jsonl
from holon.tasks import store
from holon.tasks.command import spawn

DEADLINE_S = 30

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Tmux:
    """One tmux server of the test's own (its own socket), one window of 120x36."""

    def __init__(self, tmp_path) -> None:
        self.socket = str(tmp_path / "tmux.sock")

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return proc.stdout

    def start(self, command: str) -> None:
        subprocess.run(
            ["tmux", "-S", self.socket, "new-session", "-d", "-x", "120", "-y", "36", command],
            env=subprocess_env(TERM="xterm-256color"),
            check=True,
            timeout=10,
        )

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)

    def key(self, name: str) -> None:
        self.tmux("send-keys", name)

    def until(self, check: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.1)  # polling the screen for a state, with a deadline
        raise AssertionError(f"screen never reached the state:\n{self.screen()}")

    def kill(self) -> None:
        self.tmux("kill-server")


def test_a_user_session_in_tmux(tmp_path, script):
    home = init_home(None, "a")
    gate = tmp_path / "gate"
    job = f"while [ ! -e {gate} ]; do sleep 0.05; done"
    args = {"cmd": job, "yield_time_ms": 50, "login": False}
    model = script(
        {"text": "starting", "tool_calls": [{"name": "ExecCommand", "arguments": args}]},
        {"text": "the job runs in the background"},
    )
    console = " ".join(shlex.quote(a) for a in [*holon_cmd(), "console", "a", "--model", model])
    term = Tmux(tmp_path)
    term.start(f"{console}; echo EXIT=$?; sleep 600")
    try:
        term.until(lambda s: "holon console · a · display info · idle" in s)
        term.type("run the job")
        term.key("Enter")
        term.until(lambda s: "the job runs in the background" in s and "› run the job" in s)
        term.key("F2")
        term.until(lambda s: "$ holon transcript a" in s and "assistant: starting" in s)
        term.key("Escape")
        term.until(lambda s: "$ holon transcript a" not in s and "› run the job" in s)
        term.type("/quit")
        term.key("Enter")
        term.until(lambda s: "EXIT=0" in s)
        (task,) = store.all_records(home)
        assert task["status"] == "running"  # quitting the console left it alone
        os.killpg(int(task["pid"]), 0)  # raises if its process group is gone
        assert supervises(task["supervisor_pid"], task["id"])
        prompts = [m for m in jsonl.read(home.messages) if m["kind"] == "operator_prompt"]
        assert [m["body"]["text"] for m in prompts] == ["run the job"]
    finally:
        term.kill()
        gate.touch()
        for record in store.all_records(home):
            if record.get("status") not in store.TERMINAL:
                spawn.kill_group(int(record.get("pid") or 0), grace=0.5)


def test_no_alt_screen_leaves_the_last_screen_in_the_scrollback(tmp_path, script):
    init_home(None, "a")
    model = script({"text": "inline reply"})
    console = " ".join(
        shlex.quote(a) for a in [*holon_cmd(), "console", "a", "--model", model, "--no-alt-screen"]
    )
    term = Tmux(tmp_path)
    term.start(f"echo before; {console}; echo EXIT=$?; sleep 600")
    try:
        term.until(lambda s: "holon console · a · display info · idle" in s)
        term.type("hello inline")
        term.key("Enter")
        term.until(lambda s: "inline reply" in s)
        term.key("C-q")
        screen = term.until(lambda s: "EXIT=0" in s)
        assert screen.index("before") < screen.index("› hello inline") < screen.index("EXIT=0")
        assert "\\u001b" not in screen  # drawn, not escaped by the guard meant for plain output
    finally:
        term.kill()

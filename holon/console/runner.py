"""The console's turn runner: admit a prompt as `holon prompt` does, run the agent's turns in a
subprocess of the real `holon tick`, and interrupt them as Ctrl-C interrupts `holon prompt`.

1. `submit` admits the text through `holon.ops.prompt.prompt` (wait=False): the same checks,
   the same `cli_prompt` admission, one queued message.
2. `step` (called by the app's timer) starts `holon tick AGENT --until-idle` when turns are
   wanted and no tick runs; the tick takes the agent's turn lock itself. When another process
   holds the lock (`holon watch`, cron), the tick reports `busy`: the console only follows the
   ledgers, and starts a tick again once the lock is free while a prompt of its own is unsettled.
   While the console is open and nothing else ticks, work that became due by itself (a
   task's result, a wake hint, a timer) starts a tick too, as `holon watch` would: the
   agent answers a finished task without a new prompt. (A failed turn settles its message,
   so it is not retried in a loop.) After Ctrl-C that stops until the next prompt: the
   interrupted turn waits for the operator.
3. `interrupt` sends SIGINT to the tick's process group: the turn stops where it is, as with
   Ctrl-C on `holon prompt`, and the message resumes at the next tick. Background tasks run in
   sessions of their own and never see the signal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any

from holon.agent.due import due_reasons
from holon.home.layout import Home
from holon.store.locks import FileLock

# what makes work due by itself; not "interrupted_messages": an interrupted turn waits for a prompt
DUE_BY_ITSELF = frozenset({"queued_messages", "wake_hint", "timer_due"})

# ticks left running by a quit or a switch of agent: kept so that Python neither warns about nor
# loses track of a child it still runs; each is reaped once it ends (`reap_left`)
LEFT_RUNNING: list[subprocess.Popen[bytes]] = []


def reap_left() -> list[int]:
    """The pids of the ticks left running that are still running (the ended ones are reaped)."""
    LEFT_RUNNING[:] = [p for p in LEFT_RUNNING if p.poll() is None]
    return [p.pid for p in LEFT_RUNNING]


@dataclass
class TickEnd:
    """How a tick subprocess ended: its exit code, its report (None when it printed none) and its
    stderr (an error line, when it failed)."""

    exit_code: int
    report: dict[str, Any] | None
    stderr: str
    interrupted: bool


class TurnRunner:
    """Runs `home`'s ticks for the console, one at a time."""

    def __init__(self, home: Home, model: str | None = None) -> None:
        self.home, self.model = home, model
        self.proc: subprocess.Popen[bytes] | None = None
        self.wanted = False  # a prompt was admitted and no tick has started since
        self.follows_due = True  # due work starts a tick; off after an interrupted one
        self.interrupted = False
        self.ticks_started = 0
        self.failed_in_a_row = 0  # ticks that exited non-zero: due work waits longer each time
        self.retry_at = 0.0  # time.monotonic() before which due work starts no tick
        self._out: IO[bytes] | None = None
        self._err: IO[bytes] | None = None

    def submit(self, text: str) -> str:
        """Admit `text` as an operator prompt; its message id. Raises what `holon prompt` raises
        on a bad prompt (HolonError)."""
        from holon.ops import prompt

        outcome = prompt.prompt(self.home, text, wait=False, model=self.model)
        self.wanted, self.interrupted, self.follows_due = True, False, True
        return outcome["message_id"]

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ticked_elsewhere(self) -> bool:
        """Whether another process holds the agent's turn lock (a tick of watch or cron)."""
        return not self.running and FileLock(self.home.turn_lock).is_held_elsewhere()

    def step(self) -> TickEnd | None:
        """Start a tick when one is wanted and none runs; the end of the tick that ran, once."""
        if self.proc is not None and self.proc.poll() is not None:
            return self._ended()
        retry = time.monotonic() >= self.retry_at
        if (
            self.proc is None
            and (self.wanted or (retry and self._due()))
            and not self.ticked_elsewhere()
        ):
            self._start()
        return None

    def _due(self) -> bool:
        """Work due by itself (a task's result, a wake hint, a timer) while ticks follow it."""
        return self.follows_due and not DUE_BY_ITSELF.isdisjoint(due_reasons(self.home))

    def _back_off(self, failed: bool) -> None:
        """A tick that failed leaves due work for 5, 10, 20 ... up to 60 seconds (an operator's
        prompt still starts one at once), so a fault that fails every tick costs no busy loop."""
        self.failed_in_a_row = self.failed_in_a_row + 1 if failed else 0
        wait = min(60.0, 5.0 * 2 ** (self.failed_in_a_row - 1)) if failed else 0.0
        self.retry_at = time.monotonic() + wait

    def want(self) -> None:
        """Ask for a tick at the next step (a prompt of ours waits behind another process)."""
        if not self.interrupted:
            self.wanted = True

    def interrupt(self) -> bool:
        """Ctrl-C for the running tick (its process group only); False when none runs."""
        if not self.running:
            return False
        assert self.proc is not None
        self.interrupted, self.wanted = True, False
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        return True

    def detach(self) -> int | None:
        """On quit or on a switch to another agent: the pid of a tick still running, which is
        left to finish its turns on its own (it runs in its own session); tasks, timers and
        children are never touched."""
        if self.proc is None:
            return None
        if not self.running:
            self._ended()
            return None
        pid = self.proc.pid
        LEFT_RUNNING.append(self.proc)
        for f in (self._out, self._err):
            if f is not None:
                f.close()
        self.proc = self._out = self._err = None
        return pid

    def _start(self) -> None:
        argv = [sys.executable, "-m", "holon", "tick", str(self.home.root), "--until-idle"]
        argv += ["--json"] + (["--model", self.model] if self.model else [])
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.wanted = False
        self.ticks_started += 1
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            start_new_session=True,  # the terminal's signals are the console's; SIGINT is ours
        )

    def _ended(self) -> TickEnd:
        assert self.proc is not None and self._out is not None and self._err is not None
        code = self.proc.wait()
        self._out.seek(0)
        self._err.seek(0)
        out, err = self._out.read(), self._err.read().decode("utf-8", "replace")
        self._out.close()
        self._err.close()
        self.proc = self._out = self._err = None
        try:
            reports = json.loads(out)["agents"]
            report = reports[0] if reports else None
        except (ValueError, KeyError, TypeError, IndexError):
            report = None
        if self.interrupted:
            self.follows_due = False
        self._back_off(code != 0 and not self.interrupted)
        return TickEnd(code, report, err.strip(), self.interrupted)

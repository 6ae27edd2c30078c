"""`holon watch`: a foreground loop that ticks an agent within a second of work arriving.

It waits on file-system events for `.holon/queue/new` and `.holon/tasks`
(watchfiles, imported lazily) with a timeout no longer than a second, after
which it re-reads `next_due`; without watchfiles it polls the same cheap due
check. SIGINT and SIGTERM only set a flag: a running turn finishes first.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from holon import clock
from holon.agent import nextdue
from holon.agent.due import due_reasons
from holon.home.layout import Home
from holon.runtime.tick import tick
from holon.tasks.command import reap_handed_over

MAX_WAIT_S = 1.0


class Watcher:
    def __init__(
        self,
        homes: Callable[[], list[Home]],
        *,
        model: str | None = None,
        on_report: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.homes = homes
        self.model = model
        self.on_report = on_report or (lambda r: None)
        self.stop = threading.Event()

    def install_signals(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop.set())

    def run(self) -> None:
        self.tick_due()
        try:
            import watchfiles
        except ImportError:
            watchfiles = None
        while not self.stop.is_set():
            paths = self._paths()
            if watchfiles is None or not paths:
                self.stop.wait(self._timeout())
                self.tick_due()
                continue
            for _ in watchfiles.watch(
                *paths,
                stop_event=self.stop,
                rust_timeout=int(MAX_WAIT_S * 1000),
                yield_on_timeout=True,
                debounce=50,
                step=50,
                raise_interrupt=False,
            ):
                if self.stop.is_set():
                    return
                self.tick_due()
                if self._paths() != paths:
                    break

    def _paths(self) -> list[str]:
        return [str(p) for h in self.homes() for p in (h.queue.new, h.tasks) if p.is_dir()]

    def tick_due(self) -> None:
        for home in self.homes():
            if self.stop.is_set():
                return
            if due_reasons(home):
                report = tick(home, until_idle=True, model=self.model)
                self.on_report(report.to_dict())
        reap_handed_over()

    def _timeout(self) -> float:
        now = clock.now_ts()
        due = [d for d in (nextdue.read(h) for h in self.homes()) if d is not None]
        soonest = min(due) - now if due else MAX_WAIT_S
        return max(0.05, min(MAX_WAIT_S, soonest))

"""`holon watch`: a foreground loop that ticks an agent soon after work arrives.

`Watcher` (named agents) waits on file-system events for their `.holon/queue/new`
and `.holon/tasks` (watchfiles, imported lazily) with a timeout no longer than a
second, after which it re-reads `next_due`; without watchfiles it polls the same
cheap due check. `IndexWatcher` (`--all`, optionally one shard) waits on the host
due index, registry.json and $HOLON_HOME/agents instead, and passes over the index
(`runtime/sweep.py`) on an event, at the earliest timer, or when an agent it left
marked is due a look; without watchfiles it polls the index. SIGINT and SIGTERM
only set a flag: a running turn finishes first.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from holon import clock
from holon.agent import nextdue
from holon.agent.due import due_reasons
from holon.home import dueindex
from holon.home.layout import Home
from holon.home.shard import Shard
from holon.paths import agents_dir, holon_home
from holon.runtime.sweep import sweep
from holon.runtime.tick import tick
from holon.store.atomic import DIR_MODE
from holon.tasks.command.command import reap_handed_over

MAX_WAIT_S = 1.0
POLL_S = 0.25  # without watchfiles: how often the index is listed


class _Loop:
    """What both watchers share: the model, the report sink, and a stop flag that SIGINT and
    SIGTERM only set (a running turn finishes first)."""

    def __init__(
        self,
        *,
        model: str | None = None,
        on_report: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.model = model
        self.on_report = on_report or (lambda r: None)
        self.stop = threading.Event()

    def install_signals(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop.set())


class Watcher(_Loop):
    def __init__(
        self,
        homes: Callable[[], list[Home]],
        *,
        model: str | None = None,
        on_report: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(model=model, on_report=on_report)
        self.homes = homes

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


class IndexWatcher(_Loop):
    """`holon watch --all [--shard K/N]`: ticks the agents the host due index names."""

    def __init__(
        self,
        *,
        shard: Shard | None = None,
        model: str | None = None,
        on_report: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(model=model, on_report=on_report)
        self.shard = shard

    def run(self) -> None:
        for path in (holon_home(), agents_dir()):
            path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        dueindex.ensure()
        try:
            import watchfiles
        except ImportError:
            watchfiles = None
        next_at = self.sweep()
        if watchfiles is None:
            while not self.stop.wait(POLL_S):
                next_at = self.sweep()
            return
        paths = [dueindex.index_dir(), str(holon_home()), str(agents_dir())]
        # what changed after the first pass and before the watcher was armed raised no event:
        # the first wake-up (at most MAX_WAIT_S after arming) passes again
        armed = False
        for changes in watchfiles.watch(
            *paths,
            watch_filter=None,
            recursive=False,  # the agents' own files are not watched: writers mark the index
            stop_event=self.stop,
            rust_timeout=int(MAX_WAIT_S * 1000),
            yield_on_timeout=True,
            debounce=20,
            step=10,
            raise_interrupt=False,
        ):
            if self.stop.is_set():
                return
            if not armed or changes or (next_at is not None and next_at <= clock.now_ts()):
                next_at = self.sweep()
                armed = True
            reap_handed_over()

    def sweep(self) -> float | None:
        """One pass; when the next one is due without an event."""
        done = sweep(self._tick, self._report, shard=self.shard, stop=self.stop.is_set)
        return done.next_at

    def _tick(self, home: Home) -> dict[str, Any]:
        try:
            return tick(home, until_idle=True, model=self.model).to_dict()
        except Exception as exc:  # one agent that cannot be ticked never stops the others
            error = f"{getattr(exc, 'kind', 'internal_error')}: {exc}"
            return {"agent_id": home.agent_id, "outcome": "error", "error": error}

    def _report(self, report: dict[str, Any]) -> None:
        if report.get("outcome") != "idle" or report.get("turns"):
            self.on_report(report)

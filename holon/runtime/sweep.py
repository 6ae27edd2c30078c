"""One pass of `holon tick --all` (and of `holon watch --all`): tick the agents that have due work.

Most passes read only the host due index (`holon.home.dueindex`): the agents it names are
checked, ticked when due, and their entries settled. A full pass lists every home instead
(registry plus $HOLON_HOME/agents), checks each one and rebuilds the index; it runs when the
index says so (see `dueindex.needs_full_pass`). A home whose stamp (`due.stamp`) and entries
are as the last full pass left them, with no timer come, is not checked again: nothing the
check reads changed since it found the home idle. With a shard, only that shard's agents are
checked, ticked and settled. Ticking itself is the caller's (`tick_home`), so the idle path
imports nothing heavier than the stdlib.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from holon import clock
from holon.agent.due import Due, check, stamp
from holon.home import dueindex, registry
from holon.home.layout import Home, is_home
from holon.home.shard import Shard
from holon.paths import agents_dir

HELD_RECHECK_S = 2.0  # an agent left marked (busy, paused, running a task) is checked this often
Report = dict[str, Any]


class Pass(NamedTuple):
    full: bool
    next_at: float | None  # when a watcher should pass again without an event (clock.now_ts)


class Visit(NamedTuple):
    later: float | None  # when to look at the home again (None: only when something marks it)
    left: str | None  # the entry suffix the visit left ("" now, "@ms" a timer, None no entry)
    ticked: bool


def sweep(
    tick_home: Callable[[Home], Report],
    on_report: Callable[[Report], None],
    *,
    shard: Shard | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> Pass:
    """One pass: `tick_home(home)` for each due agent of the shard, `on_report` for each report
    (the broken homes first)."""
    label = shard.label if shard else None
    full, broken, full_in = (
        dueindex.needs_full_pass(label) if dueindex.ensure() else (True, [], 0.0)
    )
    owns = shard.owns if shard else (lambda _id: True)
    if full:
        return _full(tick_home, on_report, owns, label, stop)
    for b in broken:
        if b.get("agent_id") is None or owns(b["agent_id"]):
            on_report(_broken_report(b))
    done = _indexed(tick_home, on_report, owns, stop)
    return Pass(False, _min(done.next_at, clock.now_ts() + full_in))


def _full(tick_home, on_report, owns, label, stop) -> Pass:
    started, seen = time.time(), dueindex.signature()  # before listing: a change made after
    stamps = _Stamps(label, started, owns)  # the listing is a change the next pass sees
    homes, bad = registry.scan(stamps.known)
    for b in bad:
        if b["agent_id"] is None or owns(b["agent_id"]):
            on_report(_broken_report(b))
    by_target: dict[str, list[str]] = {}
    for name in dueindex.listing() or []:
        if dueindex.parse(name) is None:
            continue
        where = dueindex.target(name)
        by_target.setdefault(os.path.abspath(where) if where else "", []).append(name)
    listed = {h.given or str(h.root) for h in homes}
    for where, names in by_target.items():
        if where not in listed:  # gone, broken (its repair makes a full pass), or not --all's
            for name in names:
                dueindex.unlink(name)
    next_at, after = None, {}
    for home in homes:
        if stop():
            return Pass(True, clock.now_ts())
        if owns(home.agent_id):
            root = home.given or str(home.root)
            mark, kept, names = stamps.now.get(root), stamps.kept.get(root), by_target.get(root, [])
            if root in stamps.vouched:  # its stamp is the one the last full pass kept
                at = _as_left(kept[1], names)
                if at is not False:  # unchanged since a pass found it idle: still idle
                    on_report({"agent_id": home.agent_id, "outcome": "idle"})
                    after[root], next_at = kept, _min(next_at, at)
                    continue
            visit = _visit(home, names, tick_home, on_report, True)
            next_at = _min(next_at, visit.later)
            if mark is not None and not visit.ticked and visit.left != "":
                after[root] = [mark.value, visit.left, mark.absent]
    dueindex.record_full_pass(label, started, seen, bad)
    dueindex.record_stamps(label, after)
    return Pass(True, _min(next_at, clock.now_ts() + dueindex.FULL_PASS_EVERY_S))


class _Stamps:
    """The stamps of a full pass (holon.agent.due.stamp): those the last one kept, and now's."""

    def __init__(self, label: str | None, started: float, owns: Callable[[str], bool]) -> None:
        self.kept, self.now = dueindex.stamps(label), {}
        self.vouched: set[str] = set()
        self.limit, self.owns = started - dueindex.SETTLE_S, owns

    def known(self, root: str, agent_id: str) -> bool:
        """Stamp the home at `root` before anything in it is read (a later change moves the
        stamp); True when the stamp is the one kept (registry.scan then trusts it is a home)."""
        if not self.owns(agent_id):
            return False
        kept = self.kept.get(root)
        if isinstance(kept, list) and len(kept) == 3 and isinstance(kept[2], int):
            now = stamp(root, self.limit, kept[2])
            if now is not None and now.value == kept[0]:
                self.now[root] = now
                self.vouched.add(root)
                return True
        self.now[root] = stamp(root, self.limit)
        return False


def _as_left(left: object, names: list[str]) -> float | None | bool:
    """Are a home's entries `names` as a visit left them (`left`: None no entry, "@ms" one
    timer entry), with the timer still ahead? Its time (None: no timer), False when not."""
    if left is None:
        return None if not names else False
    if not (isinstance(left, str) and len(names) == 1 and names[0].endswith(left)):
        return False
    parsed = dueindex.parse(names[0])
    at = parsed[1] if parsed else None
    return at if at is not None and at > clock.now_ts() else False


def _indexed(tick_home, on_report, owns, stop) -> Pass:
    now = clock.now_ts()
    groups: dict[str, tuple[list[str], bool]] = {}
    next_at = None
    for name in dueindex.listing() or []:
        parsed = dueindex.parse(name)
        if parsed is None:
            continue
        key, at = parsed
        names, due = groups.get(key, ([], False))
        names.append(name)
        groups[key] = (names, due or at is None or at <= now)
        if at is not None and at > now:
            next_at = _min(next_at, at)
    homes = _Homes()
    for names, due in groups.values():
        if not due:
            continue
        if stop():
            return Pass(False, now)
        home = homes.of(dueindex.target(names[0]))
        if home is None:  # not a home `--all` ticks (gone, broken, or never registered)
            for name in names:
                dueindex.unlink(name)
        elif owns(home.agent_id):
            next_at = _min(next_at, _visit(home, names, tick_home, on_report, False).later)
    return Pass(False, next_at)


def _visit(home: Home, names: list[str], tick_home, on_report, report_idle: bool) -> Visit:
    """Check `home`, tick it when due, then settle its entries: an entry is removed only when
    the agent is found idle, removing first and checking again after."""
    state = check(home)
    ticked = bool(state.reasons)
    if ticked:
        report = tick_home(home)
        on_report(report)
        if report.get("outcome") in ("busy", "error"):  # not ours to settle now
            dueindex.mark(home.root)
            return Visit(clock.now_ts() + HELD_RECHECK_S, "", True)
        state = check(home)
        now_name = dueindex.entry_name(home.root)  # the tick's own admissions marked it
        names = names if now_name in names else [*names, now_name]
    elif report_idle:
        on_report({"agent_id": home.agent_id, "outcome": "idle"})
    want = _want(state)
    keep = None if want is None else dueindex.key_of(home.root) + want
    if want != "":
        if want is not None:  # the new timer entry before the old ones go: never late
            dueindex.mark(home.root, state.next_due)
        extra = [n for n in names if n != keep]
        if extra:
            for name in extra:
                dueindex.unlink(name)
            state = check(home)  # a mark made before the removal is seen now
            want = _want(state)
    if want is None:
        return Visit(None, None, ticked)
    at = None if want == "" else state.next_due
    dueindex.mark(home.root, at)
    return Visit(clock.now_ts() + HELD_RECHECK_S if at is None else at, want, ticked)


def _want(state: Due) -> str | None:
    return dueindex.desired(state.reasons, state.next_due, state.tasks_active)


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _broken_report(b: dict) -> Report:
    name = b["agent_id"] or "(registry)"  # registry.json itself is unreadable
    return {**b, "agent_id": name, "outcome": b["status"]}


class _Homes:
    """The home an index entry points to, as `--all` names it: a directory under
    $HOLON_HOME/agents by its name, a registered home by its registry id; None for anything
    else. The registry is read only when an entry points outside the agents directory."""

    def __init__(self) -> None:
        self.agents = str(agents_dir())
        self.registered: dict[str, str] | None = None
        self.real: dict[str, Home] | None = None

    def of(self, where: str | None) -> Home | None:
        if not where:
            return None
        path = os.path.abspath(where)
        if os.path.dirname(path) == self.agents:
            return Home(path, os.path.basename(path)) if is_home(path) else None
        if self.registered is None:
            self.registered = {os.path.abspath(p): k for k, p in registry.load_or_none()[0].items()}
        agent_id = self.registered.get(path)
        if agent_id is not None:
            return Home(path, agent_id) if is_home(path) else None
        return self._by_real_path(path)

    def _by_real_path(self, path: str) -> Home | None:
        """A home reached through another spelling of its path (a symlink on the way)."""
        if self.real is None:
            homes = [Home(p, k) for p, k in (self.registered or {}).items()]
            self.real = {os.path.realpath(h.root): h for h in homes}
        real = os.path.realpath(path)
        if os.path.dirname(real) == os.path.realpath(self.agents) and is_home(real):
            return Home(os.path.join(self.agents, os.path.basename(real)), os.path.basename(real))
        home = self.real.get(real)
        return home if home is not None and is_home(home.root) else None

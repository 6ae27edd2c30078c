"""The host due index under crashes, through the real CLI: a writer (`holon enqueue`, `holon timer
create`) or a `holon tick --all` killed at any of its steps leaves every agent that has work
marked in $HOLON_HOME/due (early, never late), and the next pass, an index pass and not a full
one, runs that work exactly once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import run, subprocess_env

from holon.agent import due, timers
from holon.home import dueindex
from holon.home.init import init_home
from holon.home.layout import Home
from holon.paths import agents_dir


@pytest.fixture
def model(script, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", script(*[{"text": f"ok {i}"} for i in range(200)]))


def holon_ok(*args: str, **env: str):
    proc = run(*args, env=subprocess_env(**env))
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def steps(*args: str) -> list[str]:
    """The durable steps `holon *args` takes (it runs to the end)."""
    trace = Path(os.environ["HOLON_HOME"]).parent / "trace.txt"
    trace.unlink(missing_ok=True)
    holon_ok(*args, HOLON_CRASH_TRACE=str(trace))
    return [line.split()[2] for line in trace.read_text().splitlines()]


def killed(at: str, *args: str) -> bool:
    """Run `holon *args` to be killed at step `at`: True when it was, False when it ended first
    (the number of steps varies a little from run to run)."""
    proc = run(*args, env=subprocess_env(HOLON_CRASH_AT=at))
    assert proc.returncode in (-9, 0), (at, args, proc.returncode, proc.stderr)
    return proc.returncode == -9


def settle_index() -> None:
    """Make the last full pass's record current, so the next pass reads only the index (a pass
    run within seconds of a change to agents/ would otherwise be a full one again)."""
    holon_ok("tick", "--all")
    path = Path(dueindex.index_dir(), ".scan.json")
    record = json.loads(path.read_text())
    record["signature"], record["full_pass_at"] = dueindex.signature(), time.time()
    path.write_text(json.dumps(record))


def scan_record() -> bytes:
    return Path(dueindex.index_dir(), ".scan.json").read_bytes()


def index_pass() -> None:
    """One `holon tick --all` that must not be a full pass (the pass record is kept as it is)."""
    before = scan_record()
    holon_ok("tick", "--all")
    assert scan_record() == before, "a full pass ran: the index alone must find the work"


def entry_time(home: Home) -> float | None:
    """The earliest time the index names for `home` (0 for "now"); None when it has no entry."""
    key = dueindex.key_of(home.root)
    times = [
        at or 0.0
        for name in dueindex.listing() or []
        if (parsed := dueindex.parse(name)) and parsed[0] == key
        for at in [parsed[1]]
    ]
    return min(times) if times else None


def assert_never_late(*homes: Home) -> None:
    """Every agent with work is in the index, no later than its work is due. A temporary file a
    killed writer left (`crash_recovery`) is not work: nothing waits for it, and the agent's next
    tick, or the periodic full pass, removes it."""
    for home in homes:
        found = due.check(home)
        when = entry_time(home)
        if set(found.reasons) - {"crash_recovery"} or found.tasks_active:
            assert when == 0.0 or (when is not None and when <= time.time()), (home, found)
        elif found.next_due is not None:
            assert when is not None and when <= found.next_due + 0.001, (home, found, when)


def started(home: Home) -> list[str]:
    """The message ids whose turns started, in order."""
    events = home.root / ".holon" / "ledger" / "events.jsonl"
    text = events.read_text() if events.exists() else ""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r["data"]["message_id"] for r in rows if r["kind"] == "message_processing_started"]


def test_an_enqueue_killed_at_any_step_is_found_by_the_next_index_pass(model):
    home = init_home(None, "a")
    settle_index()
    enqueue = ("enqueue", "a", "--kind", "system_tick", "--text", "go")
    names = steps(*enqueue)
    assert "due.mark" in names  # the probe: a write that marks the index
    index_pass()
    ran = set(started(home))
    assert len(ran) == 1 and not due.check(home).reasons
    n = 0
    while killed(str(n := n + 1), *enqueue) or n <= len(names):
        queued = list(home.queue.pending())
        assert_never_late(home)
        index_pass()
        new = [m for m in started(home) if m not in ran]
        assert len(new) == len(set(new)) <= 1, n  # never twice
        assert not home.queue.pending() and not due.check(home).reasons, n  # nothing left behind
        assert bool(queued) == bool(new), (n, queued, new)  # what was queued ran
        ran.update(new)
        assert entry_time(home) is None  # idle again: its entry is gone


def test_a_timer_create_killed_at_any_step_is_never_late(model):
    home = init_home(None, "a")
    settle_index()
    create = ("timer", "create", "a", "--after", "1s", "--text", "ping")
    count = len(steps(*create))
    time.sleep(1.1)
    index_pass()
    assert not timers.load(home) and len(started(home)) == 1  # the probe timer fired
    n = 0
    while killed(str(n := n + 1), *create) or n <= count:
        assert_never_late(home)
        made = bool(timers.load(home))
        time.sleep(1.1)
        index_pass()
        assert not timers.load(home) and not due.check(home).reasons, n
        assert len(started(home)) == len(set(started(home)))
        if made:
            assert entry_time(home) is None, (n, dueindex.listing())


def _busy_host() -> tuple[Home, Home, Home]:
    """a has a queued message; b a one-shot timer due now and an hourly one; c a stale mark."""
    a, b, c = (init_home(None, name) for name in "abc")
    settle_index()
    holon_ok("enqueue", "a", "--kind", "system_tick", "--text", "go")
    holon_ok("timer", "create", "b", "--after", "1s", "--text", "now")
    holon_ok("timer", "create", "b", "--every", "1h", "--text", "hourly")
    dueindex.mark(c.root)
    time.sleep(1.1)
    return a, b, c


@pytest.mark.parametrize("step", ["due.mark", "due.unlink"])
def test_a_tick_all_killed_at_any_index_step_leaves_nothing_late(model, step, tmp_path):
    probe = Path(os.environ["HOLON_HOME"])
    _busy_host()
    count = steps("tick", "--all").count(step)
    assert count >= 1
    for n in range(1, count + 1):
        os.environ["HOLON_HOME"] = str(tmp_path / f"{step}-{n}")  # a fresh host each time
        a, b, c = _busy_host()
        if not killed(f"{step}:{n}", "tick", "--all"):
            break  # this run took fewer such steps than the probe
        assert_never_late(a, b, c)
        index_pass()
        index_pass()  # a second pass finds nothing more to run
        assert len(started(a)) == 1 and len(started(b)) == 1 and started(c) == [], n
        assert [t["interval_s"] for t in timers.load(b)] == [3600.0], n
        hourly = due.check(b).next_due
        assert hourly is not None and hourly > time.time() + 3000
        assert hourly - 1 < entry_time(b) <= hourly  # kept for its next run, not due now
        assert entry_time(a) is None and entry_time(c) is None
    os.environ["HOLON_HOME"] = str(probe)


def tick_all_outcomes() -> dict[str, str]:
    out = holon_ok("tick", "--all", "--json").stdout
    return {r["agent_id"]: r["outcome"] for r in json.loads(out)["agents"]}


def test_the_pass_after_an_init_reads_the_index_and_finds_the_new_agent(model):
    init_home(None, "a")
    settle_index()
    holon_ok("init", "--agent-id", "b")
    index_pass()  # the init carried itself into the index: no full pass
    holon_ok("enqueue", "b", "--kind", "system_tick", "--text", "go")
    before = scan_record()
    assert tick_all_outcomes() == {"b": "ran"}  # a full pass would report `a` idle too
    assert scan_record() == before
    assert len(started(Home(agents_dir() / "b", "b"))) == 1


def test_an_init_killed_after_placing_its_home_makes_the_next_pass_full(model):
    init_home(None, "a")
    settle_index()
    names = steps("init", "--agent-id", "probe")
    placed = names.index("init.rename") + 1  # then the registry write, the mark, the record
    assert names[placed:] == ["atomic.write", "atomic.replace", "due.mark"] + names[-2:]
    for n in range(placed + 1, len(names) + 1):  # killed before step n
        settle_index()
        agent = f"c{n}"
        assert killed(str(n), "init", "--agent-id", agent)
        assert dueindex.needs_full_pass(None)[0], n  # the record is behind the signature
        outcomes = tick_all_outcomes()
        assert outcomes.get("a") == "idle" and outcomes.get(agent) == "idle", (n, outcomes)

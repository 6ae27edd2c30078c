"""The crash-point sweep: SIGKILL a real `holon` process at each durable step of an operation
(holon.store.crashpoint), let the next tick recover, and check that nothing was lost or repeated.

For every step k of tick (a turn with a tool call that appends to a file, then its settle),
promotion of a command to a task, timer creation, init and enqueue:
- the command dies by SIGKILL at step k (or, for `torn`, after writing half of that step's bytes;
  for `enospc`, it fails cleanly as on a full disk);
- the next `holon tick --until-idle` recovers;
- every admitted message has exactly one brief (result or failure), none is left queued;
- the tool's side effect happened at most once;
- no temp file is left in the home, every JSON file parses and no ledger has a bad line.

By default a spread of steps is swept per operation (every step when there are few); set
HOLON_CRASH_SWEEP=full for every step with every action.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from helpers import run, subprocess_env

from holon.store import crashpoint, jsonl

FULL = os.environ.get("HOLON_CRASH_SWEEP") == "full"
SAMPLE = 4  # spread steps per operation in the default sweep (plus the first and the last three)


def pick(n: int) -> list[int]:
    """Which of the steps 1..n to crash at: all in the full sweep, else a spread that always
    includes the first and the last steps (the settle)."""
    if FULL or n <= SAMPLE:
        return list(range(1, n + 1))
    chosen = {1, n, n - 1, n - 2}
    chosen |= {1 + round(i * (n - 1) / (SAMPLE - 1)) for i in range(SAMPLE)}
    return sorted(chosen)


class World:
    """A HOLON_HOME with agent `a` whose model is a script; copied fresh for each crash."""

    def __init__(self, root: Path, rounds: list[dict]) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.hh = root / "hh"
        self.home = self.hh / "agents" / "a"
        self.effects = root / "effects.txt"
        script = root / "script.jsonl"
        text = "".join(json.dumps(r) + "\n" for r in rounds)
        script.write_text(text.replace("EFFECTS", str(self.effects)))
        self.env = subprocess_env(HOLON_HOME=str(self.hh), HOLON_RETRY_BACKOFF_MS="1")
        self.holon("init", "--agent-id", "a")
        self.holon("model", "set", "a", f"scripted/{script}")

    def holon(self, *args: str, crash: str | None = None, trace: Path | None = None, **extra: str):
        env = {**self.env, **extra}
        if crash:
            env["HOLON_CRASH_AT"] = crash
        if trace:
            env["HOLON_CRASH_TRACE"] = str(trace)
        return run(*args, env=env, timeout=60)

    def copy(self, dest: Path) -> World:
        shutil.copytree(self.root, dest, symlinks=True)
        clone = object.__new__(World)
        clone.root, clone.hh = dest, dest / "hh"
        clone.home, clone.effects = clone.hh / "agents" / "a", dest / "effects.txt"
        clone.env = {**self.env, "HOLON_HOME": str(clone.hh)}
        old, new = str(self.root), str(dest)
        for path in (clone.hh / "registry.json", dest / "script.jsonl", clone.home / ".holon"):
            files = [path] if path.is_file() else [p for p in path.rglob("*.json") if p.is_file()]
            for f in files:
                f.write_text(f.read_text().replace(old, new))
        return clone


def steps(world: World, tmp: Path, *args: str) -> list[str]:
    """The durable steps of `holon *args` run on a copy of `world`, in order."""
    trace = tmp / "trace"
    copy = world.copy(tmp / "traced")
    proc = copy.holon(*args, trace=trace)
    assert proc.returncode in (0, 1), proc.stderr
    lines = trace.read_text().splitlines() if trace.exists() else []
    pid = lines[0].split()[0] if lines else None
    return [line.split()[2] for line in lines if line.split()[0] == pid]


def check_home(world: World) -> None:
    """No temp file, every JSON file parses, no ledger line is garbage."""
    temps = [p for p in world.hh.rglob("*") if ".tmp." in p.name or ".init-" in p.name]
    assert temps == []
    for path in world.hh.rglob("*.json"):
        if "queue" in path.parts and "tmp" in path.parts:
            continue
        json.loads(path.read_text())
    for path in world.home.rglob("*.jsonl"):
        good, bad, _torn = jsonl.scan(path)
        assert bad == 0, path


def briefs_by_message(world: World) -> dict[str, int]:
    counts: dict[str, int] = {}
    for b in jsonl.read(world.home / ".holon" / "ledger" / "briefs.jsonl"):
        key = b.get("related_message_id")
        counts[key] = counts.get(key, 0) + 1
    return counts


def admitted(world: World) -> list[str]:
    return [m["id"] for m in jsonl.read(world.home / ".holon" / "ledger" / "messages.jsonl")]


def best_effort(step: str) -> bool:
    """A step whose failure fails nothing: the host due index (holon.home.dueindex) is only ever
    early, and a mark or removal it cannot write is left to the full pass."""
    return step.startswith("due.")


def crash(world: World, spec: str, *args: str, step: str = "") -> None:
    proc = world.holon(*args, crash=spec)
    if spec.endswith("enospc") and best_effort(step):
        assert proc.returncode == 0, proc.stderr
    elif spec.endswith("enospc"):
        assert proc.returncode in (1, 2), proc.stderr
        assert "Traceback" not in proc.stderr and "internal_error" not in proc.stderr
    else:
        assert proc.returncode == -signal.SIGKILL, (spec, proc.returncode, proc.stderr)


def recover(world: World, **env: str) -> None:
    proc = world.holon("tick", "a", "--until-idle", **env)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a turn failed, and says so
    assert "Traceback" not in proc.stderr and "internal_error" not in proc.stderr


ACTIONS = ("kill", "torn", "enospc") if FULL else ("kill",)
TOOL_TURN = [
    {
        "tool_calls": [
            {
                "name": "ExecCommand",
                "arguments": {"cmd": "echo x >> EFFECTS", "login": False},
            }
        ]
    },
    {"text": "done"},
]


@pytest.fixture(scope="module")
def turn_world(tmp_path_factory) -> World:
    world = World(tmp_path_factory.mktemp("turn"), TOOL_TURN)
    proc = world.holon("prompt", "a", "--no-wait", "append a line")
    assert proc.returncode == 0, proc.stderr
    return world


def assert_turn_exactly_once(world: World) -> None:
    recover(world)
    [message_id] = admitted(world)
    assert briefs_by_message(world) == {message_id: 1}  # not lost, not repeated
    effects = world.effects.read_text().count("x") if world.effects.exists() else 0
    assert effects <= 1
    assert [
        p.name for d in ("new", "cur") for p in (world.home / ".holon" / "queue" / d).iterdir()
    ] == []
    check_home(world)


def test_tick_turn_and_settle_survive_a_crash_at_every_step(turn_world, tmp_path):
    names = steps(turn_world, tmp_path, "tick", "a")
    assert {"jsonl.append", "atomic.replace", "queue.claim", "queue.done"} <= set(names)
    for action in ACTIONS:
        for k in pick(len(names)):
            world = turn_world.copy(tmp_path / f"{action}-{k}")
            crash(world, f"{k}:{action}", "tick", "a", step=names[k - 1])
            assert_turn_exactly_once(world)


def test_a_crash_between_settle_and_done_does_not_run_the_turn_again(turn_world, tmp_path):
    world = turn_world.copy(tmp_path / "w")
    crash(world, "queue.done:1", "tick", "a")
    recover(world)
    assert world.effects.read_text() == "x\n"
    tr = list(jsonl.read(world.home / ".holon" / "ledger" / "transcript.jsonl"))
    assert sum(e["kind"] == "assistant_round" for e in tr) == 2  # no second provider call
    assert sum(e["kind"] == "turn_terminal" for e in tr) == 1
    events = [e["kind"] for e in jsonl.read(world.home / ".holon" / "ledger" / "events.jsonl")]
    assert "message_settle_finished" in events and "message_redelivered" not in events
    assert_turn_exactly_once(world)


def test_a_crash_between_the_two_brief_appends_writes_one_brief(turn_world, tmp_path):
    """The brief goes to the transcript, then to the brief ledger: a crash between the two is
    completed from the transcript, never written twice."""
    names = steps(turn_world, tmp_path, "tick", "a")
    jsonl_steps = [i for i, n in enumerate(names, 1) if n == "jsonl.append"]
    for k in jsonl_steps[-6:]:  # the settle's appends: brief (transcript, ledger), terminal ...
        world = turn_world.copy(tmp_path / f"b{k}")
        crash(world, f"{k}", "tick", "a")
        assert_turn_exactly_once(world)


def test_a_failed_turn_settles_once_across_crashes(tmp_path):
    """A turn that fails (its script runs out) writes one failure brief, wherever it dies."""
    base = World(tmp_path / "base", [])
    base.holon("prompt", "a", "--no-wait", "fail please")
    names = steps(base, tmp_path, "tick", "a")
    for k in pick(len(names)):
        world = base.copy(tmp_path / f"f{k}")
        crash(world, f"{k}", "tick", "a")
        recover(world)
        [message_id] = admitted(world)
        assert briefs_by_message(world) == {message_id: 1}
        check_home(world)


PROMOTE = [
    {
        "tool_calls": [
            {
                "name": "ExecCommand",
                "arguments": {
                    "cmd": "sleep 0.3; echo x >> EFFECTS",
                    "login": False,
                    "yield_time_ms": 50,
                },
            }
        ]
    },
    {"text": "started"},
    {"text": "task finished"},
]


def test_promotion_to_a_task_survives_a_crash_at_every_step(tmp_path):
    base = World(tmp_path / "base", PROMOTE)
    base.holon("prompt", "a", "--no-wait", "start it")
    names = steps(base, tmp_path, "tick", "a")
    for k in pick(len(names)):
        world = base.copy(tmp_path / f"p{k}")
        crash(world, f"{k}", "tick", "a")
        recover(world)
        _wait_tasks(world)
        recover(world)
        [first, *results] = admitted(world)
        counts = briefs_by_message(world)
        assert counts.get(first) == 1, counts
        assert all(counts.get(m) == 1 for m in results), counts
        effects = world.effects.read_text().count("x") if world.effects.exists() else 0
        assert effects <= 1
        tasks = list((world.home / ".holon" / "tasks").glob("*/task.json"))
        for t in tasks:  # no task shown as running forever
            assert json.loads(t.read_text())["status"] != "running", t
        check_home(world)


def _wait_tasks(world: World, timeout: float = 10.0) -> None:
    import time

    active = world.home / ".holon" / "tasks" / "active"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not active.exists() or not any(active.iterdir()):
            return
        time.sleep(0.1)
        world.holon("tick", "a")


LONG = [
    {
        "tool_calls": [
            {
                "name": "ExecCommand",
                "arguments": {
                    "cmd": "echo started; sleep 600; echo EFFECTS",
                    "login": False,
                    "yield_time_ms": 50,
                },
            }
        ]
    },
    {"text": "started"},
    {"text": "task finished"},
]


def _command_groups(effects: Path) -> set[int]:
    """Process groups running a world's command: its wrapper's command line names the world's
    effects path."""
    needle = str(effects).encode()
    groups = set()
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2 :].split()
        if needle in cmdline and rest[0] != b"Z":
            groups.add(int(rest[2]))
    return groups


def _stop(groups: set[int]) -> None:
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_tick_killed_while_it_promotes_leaves_no_command_unaccounted(tmp_path):
    """Killed at each step of a promotion (before the record, while the record, the active
    list or the output so far is written, before the supervisor): after the next tick the
    command either has a task record whose end is recorded, or it is not running."""
    base = World(tmp_path / "base", LONG)
    base.holon("prompt", "a", "--no-wait", "start it")
    names = steps(base, tmp_path, "tick", "a")
    _stop(_command_groups(tmp_path / "traced" / "effects.txt"))  # the traced run's command
    first = names.index("task.promote") + 1
    for k in range(first, first + 8):
        world = base.copy(tmp_path / f"o{k}")
        try:
            crash(world, f"{k}", "tick", "a")
            recover(world)
            running = _command_groups(world.effects)
            records = [
                json.loads(t.read_text())
                for t in (world.home / ".holon" / "tasks").glob("*/task.json")
            ]
            if running:  # a task owns it: its end is recorded when it ends
                (rec,) = records
                assert rec["status"] == "running", (k, rec)
                _stop(running)
                _wait_tasks(world)
                done = world.home / ".holon" / "tasks" / rec["id"] / "task.json"
                rec = json.loads(done.read_text())
                assert rec["status"] in ("failed", "completed", "cancelled"), (k, rec)
            assert all(r["status"] != "running" for r in records if not running), (k, records)
            check_home(world)
        finally:
            _stop(_command_groups(world.effects))


TIMER = ("timer", "create", "a", "--after", "1m", "--text", "ring")


def later() -> str:
    """A clock two minutes on: the timer made now is due."""
    import time

    return str(time.time() + 120)


def test_timer_creation_survives_a_crash_at_every_step(tmp_path):
    base = World(tmp_path / "base", [{"text": "woke"}])
    names = steps(base, tmp_path, *TIMER)
    assert names, "timer creation has durable steps"
    for k in pick(len(names)):
        world = base.copy(tmp_path / f"t{k}")
        crash(world, f"{k}", *TIMER)
        recover(world, HOLON_NOW=later())
        # the timer either never existed or fired exactly once: a due timer is never skipped
        made = [m for m in admitted(world)]
        assert len(made) <= 1
        if made:
            assert briefs_by_message(world) == {made[0]: 1}
        timers = list((world.home / ".holon" / "timers").glob("*.json"))
        assert timers == []  # a one-shot timer that fired is gone; one never made is absent
        check_home(world)


def test_a_timer_made_before_a_crash_is_never_skipped_by_tick_all(tmp_path):
    """The next-due index is lowered before the timer file is written: whatever step the
    creation dies after the timer file exists, `tick --all` finds the agent due."""
    base = World(tmp_path / "base", [{"text": "woke"}])
    names = steps(base, tmp_path, *TIMER)
    for k in range(1, len(names) + 1):
        world = base.copy(tmp_path / f"n{k}")
        crash(world, f"{k}", *TIMER)
        if not list((world.home / ".holon" / "timers").glob("tmr*.json")):
            continue
        proc = world.holon("tick", "--all", HOLON_NOW=later())
        assert proc.returncode == 0, proc.stderr
        assert len(admitted(world)) == 1, (k, names[k - 1])


def test_init_survives_a_crash_at_every_step(tmp_path):
    hh = tmp_path / "hh"
    env = subprocess_env(HOLON_HOME=str(hh))
    trace = tmp_path / "trace"
    run(
        "init",
        "--agent-id",
        "t",
        env={**env, "HOLON_HOME": str(tmp_path / "th"), "HOLON_CRASH_TRACE": str(trace)},
    )
    n = len(trace.read_text().splitlines())
    assert n > 3
    for k in pick(n):
        shutil.rmtree(hh, ignore_errors=True)
        proc = run("init", "--agent-id", "b", env={**env, "HOLON_CRASH_AT": str(k)})
        assert proc.returncode == -signal.SIGKILL
        again = run("init", "--agent-id", "b", env=env)
        if again.returncode != 0:  # the home was made before the crash: it is whole and usable
            assert "already_exists" in again.stderr, again.stderr
        status = run("status", "b", "--json", env=env)
        assert status.returncode == 0, (k, status.stderr)
        leftovers = [p.name for p in (hh / "agents").iterdir() if p.name.startswith(".")]
        assert leftovers == []


def test_enqueue_is_all_or_nothing_at_every_step(turn_world, tmp_path):
    names = steps(turn_world, tmp_path, "prompt", "a", "--no-wait", "second")
    for action in ("kill", "torn", "enospc"):
        for k in pick(len(names)):
            world = turn_world.copy(tmp_path / f"{action}{k}")
            proc = world.holon("prompt", "a", "--no-wait", "second", crash=f"{k}:{action}")
            if action == "enospc" and best_effort(names[k - 1]):
                assert proc.returncode == 0, proc.stderr
            else:
                assert proc.returncode != 0
            recover(world)
            ids = admitted(world)
            counts = briefs_by_message(world)
            # the first prompt ran once; the second is either admitted whole and ran once, or
            # absent (its sender saw the failure), never half-queued or set aside unreadable
            assert all(counts.get(m) == 1 for m in ids), counts
            assert set(counts.values()) == {1}, counts
            assert not list((world.home / ".holon" / "queue" / "dead").iterdir())
            check_home(world)


def test_crash_points_are_counted_per_process_and_not_inherited(tmp_path):
    """HOLON_CRASH_AT is consumed by the process that imports holon.store.crashpoint: the
    commands and task supervisors it starts never inherit it."""
    assert "HOLON_CRASH_AT" not in os.environ
    assert crashpoint.ARMED is False


TWO_CALLS = [
    {
        "tool_calls": [
            {"name": "ExecCommand", "arguments": {"cmd": "echo x >> EFFECTS", "login": False}},
            {"name": "ExecCommand", "arguments": {"cmd": "echo y >> EFFECTS", "login": False}},
        ]
    },
    # a power loss can take a round the scripted cursor already passed (it stands in for a
    # remote model): the resumed turn is answered by the next line
    *[{"text": "done"}] * 3,
]


def test_a_power_loss_at_any_group_commit_barrier_loses_only_what_follows_it(tmp_path):
    """At each barrier of a turn's group commit (holon.store.groupcommit) the bytes appended since
    the last one are cut off, as a power loss would, then the process is killed: the state never
    points past what is left (no `state_rebuilt`), the turn settles once, no call runs twice (one
    whose result was lost is reported interrupted) and none ran without its intent left."""
    base = World(tmp_path / "base", TWO_CALLS)
    assert base.holon("prompt", "a", "--no-wait", "two lines").returncode == 0
    names = steps(base, tmp_path, "tick", "a")
    barriers = names.count("groupcommit.barrier")
    assert barriers >= 3  # each call's intent, the settle's state write
    for k in range(1, barriers + 1):
        world = base.copy(tmp_path / f"p{k}")
        crash(world, f"groupcommit.barrier:{k}:powerloss", "tick", "a")
        kinds = [e["kind"] for e in jsonl.read(world.home / ".holon/ledger/transcript.jsonl")]
        if k == 1:  # the turn's records before its first call's intent are gone
            assert "assistant_round" not in kinds and "tool_call" not in kinds, kinds
        assert_turn_exactly_once(world)
        lines = world.effects.read_text().splitlines() if world.effects.exists() else []
        assert len(lines) == len(set(lines)), lines
        transcript = jsonl.read(world.home / ".holon/ledger/transcript.jsonl")
        intents = [e["data"]["arguments"]["cmd"] for e in transcript if e["kind"] == "tool_call"]
        for line in lines:  # no effect without its intent: an intent is durable before its call
            assert any(cmd.startswith(f"echo {line} ") for cmd in intents), (line, intents)
        events = [e["kind"] for e in jsonl.read(world.home / ".holon/ledger/events.jsonl")]
        assert "state_rebuilt" not in events

"""One corrupt runtime file (run state, identity, settings, registry, config, wake hint, budget,
workspace), in every way a file can be corrupt, under the commands an operator runs.

Every command ends with an exit code in {0, 1, 2, 3}, never a traceback or `internal_error`; a
failure is one `holon: <kind>: ` line naming the file and a `hint:` line; a tick that stops leaves
the queued prompt in the queue (never dead-lettered or blamed). The matrix runs in process
(holon.cli.main.main); a few cases (FIFO, /dev/zero, a corrupt registry) also run the real CLI in
a subprocess, where a blocking read would hang.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import run
from scenario_helpers import cli

STATE, AGENT, SETTINGS = ".holon/state.json", ".holon/agent.json", ".holon/settings.json"
WAKE, BUDGET, WORKSPACE = ".holon/wake_hint.json", ".holon/budget.json", ".holon/workspace.json"
# file (relative to the agent home, or `$` + relative to HOLON_HOME) -> its fields to spoil
FILES = {
    STATE: ("turn_index", "status", "inflight", "context", "last_tick_at"),
    AGENT: ("agent_id", "home_format", "migrations", "budget"),
    SETTINGS: ("lifecycle", "model_override", "attached_workspaces"),
    WAKE: ("deliveries", "payloads", "source"),
    BUDGET: ("daily_tokens", "turn_tokens"),
    WORKSPACE: ("execution_root",),
    "$registry.json": ("agents",),
    "$config.toml": (),
}
CLASSES = [
    "empty",
    "truncated",
    "garbage",
    "array",
    "null",
    "string",
    "number",
    "nan",
    "wrong_types",
    "negative",
    "huge",
    "deep",
    "directory",
    "fifo",
    "devzero",
    "unreadable",
]


def corrupt(path: Path, how: str, fields: tuple[str, ...]) -> None:
    if path.is_dir():
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    spoiled = {
        "wrong_types": {f: ["x"] if f != "agents" else {"a": 5} for f in fields} or {"model": 5},
        "negative": {f: -5 for f in fields} or {"model": -5},
        "huge": {f: 1e308 for f in fields} or {"model": 1e308},
    }
    if how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "devzero":
        path.symlink_to("/dev/zero")
    elif how in spoiled:
        path.write_text(json.dumps(spoiled[how]) if path.suffix == ".json" else "model = [[[")
    else:
        data = {
            "empty": b"",
            "truncated": b'{"status": "awa',
            "garbage": b"\xff\xfe\x00\x80garbage",
            "array": b"[]",
            "null": b"null",
            "string": b'"x"',
            "number": b"1",
            "nan": b'{"turn_index": NaN, "deliveries": Infinity, "daily_tokens": -Infinity}',
            "deep": b"[" * 100_000,
            "unreadable": b"{}",
        }[how]
        path.write_bytes(data)
        if how == "unreadable":
            path.chmod(0)


@pytest.fixture
def prepared(holon_env, script, monkeypatch):
    """Agent `a` (registered) with one operator prompt queued; a scripted model that answers."""
    monkeypatch.setenv("HOLON_MODEL", script({"text": "done"}))
    assert cli("init", "--agent-id", "a")[0] == 0
    assert cli("prompt", "--no-wait", "a", "hello")[0] == 0
    return holon_env / "agents" / "a"


def where(home: Path, name: str) -> Path:
    return home.parent.parent / name[1:] if name.startswith("$") else home / name


def queue(home: Path) -> tuple[list[str], list[str]]:
    q = home / ".holon" / "queue"
    return sorted(os.listdir(q / "new")) + sorted(os.listdir(q / "cur")), os.listdir(q / "dead")


def check(rc: int, err: str, args: tuple[str, ...]) -> None:
    assert rc in (0, 1, 2, 3), (args, rc, err)
    assert "Traceback" not in err and "internal_error" not in err, (args, err)
    if rc != 0 and args[0] != "doctor":
        lines = err.splitlines()
        assert lines[0].startswith("holon: ") and lines[0].count(":") >= 2, (args, err)
        assert any(line.startswith("hint: ") for line in lines[1:]), (args, err)
        assert len(lines[0]) < 1000, "the error quotes no large input"


COMMANDS = [
    ("status", "a"),
    ("tick", "a"),
    ("prompt", "--no-wait", "a", "more"),
    ("agents",),
    ("doctor", "a"),
    ("timer", "list", "a"),
    ("model", "show", "a"),
    ("work", "list", "a"),
]


@pytest.mark.parametrize("how", CLASSES)
@pytest.mark.parametrize("name", list(FILES))
def test_a_corrupt_runtime_file_gives_a_clear_error_or_is_set_aside(prepared, name, how):
    if how == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000")
    home = prepared
    [prompt], _ = queue(home)
    corrupt(where(home, name), how, FILES[name])
    for args in COMMANDS:
        rc, _out, err = cli(*args)
        check(rc, err, args)
        if args[0] == "tick":
            waiting, dead = queue(home)
            assert dead == [], f"a prompt was dead-lettered over {name}: {err}"
            if rc != 0:
                assert prompt in waiting, "a tick that stopped left the prompt queued"
                assert name.lstrip("$").split("/")[-1] in err, "the error names the file"
        if name == STATE or name == WAKE or rc == 0:
            continue  # a run state or a wake hint is set aside: later commands see a fresh one
        corrupt(where(home, name), how, FILES[name])


@pytest.mark.parametrize(
    "name, how",
    [(STATE, "fifo"), (AGENT, "devzero"), (SETTINGS, "fifo"), ("$registry.json", "truncated")],
)
def test_the_real_cli_never_hangs_on_a_corrupt_file(prepared, name, how):
    home = prepared
    corrupt(where(home, name), how, FILES[name])
    for args in (("status", "a"), ("tick", "a"), ("status", str(home))):
        proc = run(*args, timeout=30)
        check(proc.returncode, proc.stderr, args)
    waiting, dead = queue(home)
    assert dead == []


def test_a_corrupt_budget_stops_the_tick_before_the_prompt_is_claimed(prepared):
    home = prepared
    (home / BUDGET).write_text("[1, 2")
    proc = run("tick", "a")
    assert proc.returncode == 1
    first, hint = proc.stderr.splitlines()[:2]
    problem = "is not valid JSON (Expecting ',' delimiter at line 1)"
    assert first == f"holon: corrupt_state: {home / BUDGET} {problem}"
    assert hint.startswith("hint: set the budgets again with `holon model budget")
    assert len(queue(home)[0]) == 1 and queue(home)[1] == []
    assert run("model", "budget", "a", "--daily-tokens", "0").returncode == 0  # the repair
    assert run("tick", "a").returncode == 0
    assert queue(home) == ([], [])


def test_a_corrupt_registry_breaks_only_what_needs_it(prepared, holon_env):
    (holon_env / "registry.json").write_text('{"agents": ')
    assert run("status", "a").returncode == 0  # found under $HOLON_HOME/agents
    assert run("status", str(prepared)).returncode == 0
    listing = run("agents")
    assert listing.returncode == 0 and "broken" in listing.stdout
    init = run("init", "--agent-id", "b")
    assert init.returncode == 2 and init.stderr.startswith("holon: corrupt_registry: ")
    assert "holon doctor --repair" in init.stderr
    repaired = run("doctor", "--repair")
    assert f"repaired: {holon_env / 'registry.json'}: rebuilt" in repaired.stdout
    assert json.loads((holon_env / "registry.json").read_text())["agents"] == {"a": "agents/a"}
    assert run("init", "--agent-id", "b").returncode == 0

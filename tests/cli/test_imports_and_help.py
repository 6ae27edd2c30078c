"""The idle path stays light, every command has help, and the root help text is golden."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from golden_check import check
from helpers import REPO, run, subprocess_env

HEAVY = (
    "openai",
    "anthropic",
    "httpx",
    "httpx2",
    "pexpect",
    "pydantic",
    "watchfiles",
    "croniter",
    "sqlite3",
    "textual",
    "mcp",
    "mcp_types",
)


def _imported(*args: str, **env: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "holon", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(**env),
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["tick", "--all"], ["tick", "a"]])
def test_idle_paths_import_no_sdk_or_heavy_module(agent, args):
    if args[0] == "tick":  # the first `tick --all` reads every home; the idle ones after it
        _settled_pass()
    names = _imported(*args)
    # a scheduler's idle tick skips click (holon.cli.tickfast)
    assert ("click" in names) == (args[0] != "tick")
    leaked = sorted(n for n in HEAVY if n in names)
    assert leaked == [], f"{args} imported {leaked}"


def _settled_pass() -> None:
    """Record a full pass that the next `tick --all` trusts (registry.json and the agents
    directory dated back first: a pass right after a change to them is not trusted)."""
    import time

    from holon.paths import agents_dir, registry_path

    past = time.time() - 60
    for path in (registry_path(), agents_dir()):
        if path.exists():
            os.utime(path, (past, past))
    assert run("tick", "--all").returncode == 0


def test_console_help_does_not_import_textual():
    """Textual is the console's alone, and only once it runs: not for its --help."""
    names = _imported("console", "--help")
    assert "click" in names and "textual" not in names and "rich" not in names


@pytest.mark.slow
def test_a_turn_that_calls_no_mcp_tool_imports_no_mcp_and_starts_no_server(
    agent, holon_env, tmp_path, script
):
    """MCP servers configured and their tools cached: an idle tick, and a busy one whose model
    calls no MCP tool, load nothing of the SDK and start no server."""
    starts = tmp_path / "starts.log"
    fault = REPO / "tests" / "support" / "mcp_fault_server.py"
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(
        f"[mcp_servers.f]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(fault))}]\n"
    )
    env = {"FAULT_STARTS": str(starts)}
    listed = run("mcp", "tools", "a", env=subprocess_env(**env))
    assert "mcp__f__echo" in listed.stdout, listed.stderr
    assert len(starts.read_text().splitlines()) == 1
    assert not {"mcp", "mcp_types"} & _imported("tick", "a", **env)
    run("model", "set", "a", script({"text": "no tools today"}))
    run("prompt", "a", "hello", "--no-wait")
    names = _imported("tick", "a", **env)
    assert "pydantic" in names  # a turn ran
    assert not {"mcp", "mcp_types"} & names
    assert "no tools today" in run("briefs", "a").stdout
    assert len(starts.read_text().splitlines()) == 1


def _commands() -> list[list[str]]:
    import click

    from holon.cli.main import COMMANDS, cli

    out = []
    ctx = click.Context(cli)
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        out.append([name])
        if isinstance(cmd, click.Group):
            out += [[name, sub] for sub in cmd.list_commands(ctx)]
    return out


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p))
def test_every_command_has_help(path):
    r = run(*path, "--help")
    assert r.returncode == 0, r.stderr
    assert "Usage: holon " + " ".join(path) in r.stdout
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert len(lines) >= 2, "a command needs a description"


def test_root_help_is_golden():
    check("help/holon.txt", run("--help").stdout)


def test_version():
    from holon import __version__

    assert run("--version").stdout.strip() == f"holon, version {__version__}"

"""The idle path stays light, every command has help, and the root help text is golden."""

from __future__ import annotations

import subprocess
import sys

import pytest
from golden_check import check
from helpers import run, subprocess_env

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
)


def _imported(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "holon", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["tick", "--all"], ["tick", "a"]])
def test_idle_paths_import_no_sdk_or_heavy_module(agent, args):
    names = _imported(*args)
    assert "click" in names
    leaked = sorted(n for n in HEAVY if n in names)
    assert leaked == [], f"{args} imported {leaked}"


def test_console_help_does_not_import_textual():
    """Textual is the console's alone, and only once it runs: not for its --help."""
    names = _imported("console", "--help")
    assert "click" in names and "textual" not in names and "rich" not in names


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

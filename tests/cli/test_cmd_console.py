"""`holon console` refused where it cannot run: without a terminal, or for an agent that does not
exist (a clear error and exit 2, never a traceback). The app itself: tests/console/."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import run

from holon.cli.console import console_cmd
from holon.errors import UsageError


def test_without_a_terminal_it_says_what_to_use_instead(agent):
    r = run("console", "a")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("holon: not_a_terminal: holon console needs a terminal")
    assert "`holon prompt`" in r.stderr and "Traceback" not in r.stderr


def test_an_unknown_agent_is_refused_first(holon_env):
    r = run("console", "nobody")
    assert r.returncode == 2 and "nobody" in r.stderr and "Traceback" not in r.stderr
    r = run("console")  # the default agent, `main`, which does not exist yet
    assert r.returncode == 2 and "main" in r.stderr


def test_in_process_a_pipe_is_refused(agent):
    result = CliRunner().invoke(console_cmd, ["a"])
    assert isinstance(result.exception, UsageError)
    assert result.exception.kind == "not_a_terminal"

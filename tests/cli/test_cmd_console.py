"""`holon console` refused where it cannot run: an agent that does not exist, or no terminal (a
clear error and exit 2, never a traceback). The app itself: tests/console/."""

from __future__ import annotations

import io
import sys

from cmd_checks import fails
from helpers import run

import holon.cli.console  # noqa: F401  (the command module under test, run through main)
from holon.cli.terminal import TerminalGuard, unguarded


def test_without_a_terminal_it_says_what_to_use_instead(agent):
    out, err = fails("console", "a", code=2, kind="not_a_terminal")
    assert out == "" and "holon console needs a terminal" in err and "`holon prompt`" in err


def test_an_unknown_agent_is_refused_first(holon_env):
    r = run("console", "nobody")
    assert r.returncode == 2 and "nobody" in r.stderr and "Traceback" not in r.stderr
    r = run("console")  # the default agent, `main`, which does not exist yet
    assert r.returncode == 2 and "main" in r.stderr


def test_the_console_draws_on_the_terminal_unguarded_and_the_guard_comes_back(monkeypatch):
    raw = io.StringIO()
    guard = TerminalGuard(raw)
    monkeypatch.setattr(sys, "stdout", guard)
    with unguarded():
        assert sys.stdout is raw
        sys.stdout.write("\x1b[2J")
    assert sys.stdout is guard
    sys.stdout.write("\x1b[2J")
    assert raw.getvalue() == "\x1b[2J\\u001b[2J"

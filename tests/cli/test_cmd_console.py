"""`holon console` refused where it cannot run: an agent that does not exist, or no terminal (a
clear error and exit 2, never a traceback). The app itself: tests/console/."""

from __future__ import annotations

from cmd_checks import fails
from helpers import run

import holon.cli.console  # noqa: F401  (the command module under test, run through main)


def test_without_a_terminal_it_says_what_to_use_instead(agent):
    out, err = fails("console", "a", code=2, kind="not_a_terminal")
    assert out == "" and "holon console needs a terminal" in err and "`holon prompt`" in err


def test_an_unknown_agent_is_refused_first(holon_env):
    r = run("console", "nobody")
    assert r.returncode == 2 and "nobody" in r.stderr and "Traceback" not in r.stderr
    r = run("console")  # the default agent, `main`, which does not exist yet
    assert r.returncode == 2 and "main" in r.stderr

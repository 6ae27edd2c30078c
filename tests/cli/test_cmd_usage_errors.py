"""One error format through the real entry point: click's usage errors become
`holon: usage: <message>` plus a `hint:` with the command's usage line, exit 2; bare `holon` and a
bare group print their help on stdout with exit 0; the command list is never cut."""

from __future__ import annotations

import re

import pytest
from helpers import run

CASES = [
    (("stauts",), "No such command 'stauts'. Did you mean 'status'?", "holon [OPTIONS]"),
    (("status",), "Missing argument 'AGENT'.", "holon status [OPTIONS] AGENT"),
    (("status", "a", "--jsn"), "Did you mean '--json'?", "holon status [OPTIONS] AGENT"),
    (("status", "a", "--nosuch"), "No such option '--nosuch'", "holon status [OPTIONS] AGENT"),
    (("transcript", "a", "--tail", "-1"), "-1 is not in the range", "holon transcript"),
    (("prompt", "a", "x", "--priority", "nope"), "'nope' is not one of", "holon prompt"),
    (("briefs", "a", "--tail", "-5"), "-5 is not in the range", "holon briefs [OPTIONS] [AGENT]"),
    (("task", "nope"), "No such command 'nope'.", "holon task [OPTIONS] COMMAND"),
]


@pytest.mark.parametrize("args, message, usage", CASES, ids=lambda c: str(c))
def test_a_usage_error_is_one_holon_line_and_a_hint(args, message, usage):
    r = run(*args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    first, hint = r.stderr.splitlines()
    assert first.startswith("holon: usage: ") and message in first, first
    assert hint.startswith(f"hint: usage: {usage}") and "--help` explains it" in hint, hint


@pytest.mark.parametrize("args", [(), ("task",), ("model",)])
def test_bare_holon_and_a_bare_group_print_help_on_stdout(args):
    r = run(*args)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(f"Usage: {' '.join(('holon', *args))} ")
    assert "Commands:" in r.stdout


def test_the_command_list_says_each_summary_whole_in_plain_words():
    commands = run("--help").stdout.split("Commands:\n", 1)[1]
    assert "..." not in commands
    names = set(re.findall(r"\b[A-Z][a-z]+[A-Z][A-Za-z]+\b", commands))  # CamelCase
    assert names <= {"ExecCommand", "ApplyPatch"}, names  # tool names only, no type names

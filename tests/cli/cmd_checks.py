"""Checks shared by the per-command tests (tests/cli/test_cmd_*.py).

`invoke` runs one click command object in process with CliRunner (holon errors propagate: they
are turned into the error line only by holon.cli.main.main); `fails` runs `holon ARGS` through
main in process and asserts the error contract: the exit code, one `holon: <kind>: ` line and a
`hint:` line on stderr, and never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import click
from click.testing import CliRunner, Result
from scenario_helpers import cli


def invoke(command: click.Command, *args: str, input: str | bytes | None = None) -> Result:
    # the root group's context settings: click caches a command's help option on first use, and the
    # man page generator (tests/cli/test_manpages.py) must see the same `-h, --help` afterwards
    return CliRunner().invoke(
        command, list(args), input=input, catch_exceptions=False, help_option_names=["-h", "--help"]
    )


def ok(command: click.Command, *args: str, input: str | bytes | None = None) -> Result:
    result = invoke(command, *args, input=input)
    assert result.exit_code == 0, (result.exit_code, result.output)
    return result


def ok_json(command: click.Command, *args: str, input: str | bytes | None = None) -> Any:
    return json.loads(ok(command, *args, input=input).stdout)


def fails(*args: str, code: int, kind: str, stdin: str | None = None) -> tuple[str, str]:
    """`holon ARGS` in process must fail with `code` and a `holon: KIND: ` line plus a hint."""
    rc, out, err = cli(*args, stdin=stdin)
    lines = err.splitlines()
    assert rc == code, (rc, out, err)
    assert lines and lines[0].startswith(f"holon: {kind}: "), err
    assert any(line.startswith("hint: ") for line in lines[1:]), err
    assert "Traceback" not in err
    return out, err


def usage_error(command: click.Command, *args: str) -> Result:
    """Bad options are click usage errors: exit 2 and a `Usage:` line, never a traceback."""
    result = CliRunner().invoke(command, list(args))
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Usage:" in result.output and "Traceback" not in result.output
    return result

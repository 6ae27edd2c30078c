"""Rendering helpers shared by commands: one JSON document, JSON lines, reading input, and the
terminal guard that keeps escape sequences in untrusted text off the operator's terminal."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from holon.cli.inputs import parse_json_arg, read_text_arg  # noqa: F401  (re-exported)
from holon.cli.terminal import TerminalGuard, guard_terminal  # noqa: F401  (re-exported)


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def emit_jsonl(records: Any) -> None:
    out = sys.stdout
    for rec in records:
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()

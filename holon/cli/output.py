"""Rendering helpers shared by commands: one JSON document, JSON lines, reading input."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from holon.errors import InvalidInput


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def emit_jsonl(records: Any) -> None:
    out = sys.stdout
    for rec in records:
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()


def read_text_arg(text: str | None, what: str = "TEXT") -> str:
    """TEXT, or `-` (or nothing, when stdin is not a terminal) for standard input; UTF-8 only."""
    if text is not None and text != "-":
        return text
    if text is None and sys.stdin.isatty():
        raise InvalidInput(
            f"no {what} given", kind="missing_input", hint=f"pass {what}, or `-` to read stdin"
        )
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"standard input is not valid UTF-8 (byte {exc.start})",
            kind="invalid_utf8",
            hint="send UTF-8 text",
        ) from None


def parse_json_arg(raw: str, what: str) -> Any:
    if raw.startswith("@"):
        try:
            with open(raw[1:], "rb") as fh:
                raw = fh.read().decode("utf-8")
        except FileNotFoundError:
            raise InvalidInput(
                f"{what}: no such file {raw[1:]}",
                kind="invalid_json",
                hint="give a JSON literal, @path or - for stdin",
            ) from None
        except UnicodeDecodeError:
            raise InvalidInput(
                f"{what}: file is not UTF-8", kind="invalid_utf8", hint="send UTF-8 JSON"
            ) from None
    elif raw == "-":
        raw = read_text_arg("-", what)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(
            f"{what} is not valid JSON: {exc}",
            kind="invalid_json",
            hint="give a JSON literal, @path or - for stdin",
        ) from None

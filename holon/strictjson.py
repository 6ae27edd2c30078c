"""JSON from outside (a command line, a tool call, a script): no NaN or Infinity, no number that
overflows to infinity, no lone surrogate, bounded nesting; one `InvalidJson` (a ValueError)."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64  # deeper input is refused, never recursed into


class InvalidJson(ValueError):
    """The text is not JSON as holon accepts it; the message says why, in one line."""


def loads(raw: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse `raw`; InvalidJson for anything json.loads would refuse, for NaN/Infinity, for a
    number too large for a float, for a string that cannot be written as UTF-8, and for
    nesting deeper than `max_depth`."""
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise InvalidJson(f"nested deeper than {max_depth} levels") from None
    except InvalidJson:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, int too long
        raise InvalidJson(str(exc).splitlines()[0][:200]) from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """InvalidJson when `value` nests deeper than `max_depth`, holds a string that cannot be
    encoded as UTF-8 (a lone surrogate) or a NaN/infinite float; iterative, so any depth is safe
    to check."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _utf8(item)
        elif isinstance(item, float) and not math.isfinite(item):  # parsed elsewhere, leniently
            raise InvalidJson(f"{item} is not a JSON number")
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise InvalidJson(f"nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for k in item:
                    _utf8(k)
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)


def _utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidJson(f"string holds a lone surrogate at position {exc.start}") from None


def _no_constant(name: str) -> Any:
    raise InvalidJson(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise InvalidJson(f"number {text[:40]} is too large")
    return value

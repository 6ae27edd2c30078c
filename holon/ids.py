"""Identifiers: a prefix, a time-ordered part and randomness (sortable by creation)."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = _ALPHABET[r] + out
    return out or "0"


def new_id(prefix: str) -> str:
    return f"{prefix}_{_base36(time.time_ns() // 1000).rjust(11, '0')}{secrets.token_hex(3)}"

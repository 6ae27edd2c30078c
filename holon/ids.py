"""Identifiers: new ids (a prefix, a time-ordered part and randomness, sortable by creation), and
the one check an id from outside (a command line, a tool argument) passes before it names a file."""

from __future__ import annotations

import os
import re
import time

from holon.errors import InvalidInput

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
MAX_ID_LEN = 128
# letters, digits, '.', '_' and '-'; never a leading '.' (so never '.', '..' or a hidden file);
# always fullmatch: `$` would accept a trailing "\n"
_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")  # MAX_ID_LEN in all
ID_RULE = f"letters, digits, '.', '_' or '-', at most {MAX_ID_LEN}, not starting with '.'"


def _base36(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = _ALPHABET[r] + out
    return out or "0"


def new_id(prefix: str) -> str:
    return f"{prefix}_{_base36(time.time_ns() // 1000).rjust(11, '0')}{os.urandom(3).hex()}"


def is_id(value: object) -> bool:
    """Whether `value` may be used as one file name component: no '/', no '..', no NUL, no
    control character, no leading '.', bounded length."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def quote(value: object, limit: int = 200) -> str:
    """`value` as repr() for an error message, cut to about `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_id(value: object, what: str = "id") -> str:
    """`value` when it is a valid identifier, else InvalidInput (kind `invalid_id`)."""
    if not is_id(value):
        raise InvalidInput(
            f"invalid {what} {quote(value)}", kind="invalid_id", hint=f"an id uses {ID_RULE}"
        )
    return value  # type: ignore[return-value]

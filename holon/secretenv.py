"""Which environment variables hold secrets, and an environment without them.

One rule for every process holon starts that an agent's output could reach (sandboxed commands,
git): variables whose names look like credentials (KEY, SECRET, TOKEN, PASSWORD, PASSWD,
CREDENTIAL, AUTH), every provider's `api_key_env` in config.toml and every name in keys.json are
removed, unless the caller's `keep` passes the name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from holon import config
from holon.errors import HolonError
from holon.procguard import looks_secret


def credential_names() -> set[str]:
    """Every provider's `api_key_env` and every name stored in keys.json (an unreadable keys
    file adds none; the name patterns still apply)."""
    from holon import keys

    names = set()
    providers = config.get("providers", {})
    if isinstance(providers, dict):
        for table in providers.values():
            if isinstance(table, dict) and isinstance(table.get("api_key_env"), str):
                names.add(table["api_key_env"])
    try:
        names.update(keys.names())
    except (HolonError, OSError):
        pass
    return names


def scrub(environ: Mapping[str, str], keep: Callable[[str], bool] | None = None) -> dict[str, str]:
    """`environ` without the variables that hold (or look like they hold) secrets."""
    named = credential_names()
    return {
        k: v
        for k, v in environ.items()
        if (keep is not None and keep(k)) or not (looks_secret(k) or k in named)
    }

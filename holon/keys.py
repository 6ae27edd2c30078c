"""Provider credentials for unattended runs: `$HOLON_HOME/keys.json`, mode 0600.

A key is looked up by the name of its environment variable (`OPENAI_API_KEY`, ...). The
environment wins; the file is the fallback that cron, launchd and systemd runs, which carry no
secrets in their environment, rely on. Values are never printed, logged or put in an error:
`source()` and `report()` say where each key comes from, not what it is.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from holon import jsonfile
from holon.errors import InvalidInput, UsageError
from holon.paths import holon_home
from holon.procguard import undumpable

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MAX_VALUE = 16 * 1024


def path() -> Path:
    return holon_home() / "keys.json"


def _read() -> dict[str, str]:
    p = path()
    try:
        data = jsonfile.read_bytes(p, 1 << 20)  # bounded, never blocks on a FIFO
    except jsonfile.Unreadable as exc:
        raise UsageError(
            f"{p} {exc}",
            kind="unreadable_keys",
            hint=f"make {p} a file readable by this user (mode 0600), or remove it",
        ) from None
    if data is None:
        return {}
    undumpable()  # this process now holds the keys: its memory is not for the commands to read
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise UsageError(
            f"{p} is not valid JSON",
            kind="corrupt_keys",
            hint="fix it, or remove it and set the keys again with `holon keys set`",
        ) from None
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, dict):
        raise UsageError(
            f"{p} has no `keys` object",
            kind="corrupt_keys",
            hint="remove it and set the keys again with `holon keys set`",
        )
    return {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, str)}


def lookup(name: str) -> str | None:
    """The key named `name`: the environment first, then the keys file; None when neither has
    it (a corrupt keys file counts as not having it: the caller reports the missing key)."""
    value = os.environ.get(name)
    if value:
        undumpable()  # whatever the variable is called, this process now holds a key
        return value
    try:
        return _read().get(name) or None
    except UsageError:
        return None


def source(name: str) -> str | None:
    """Where `name` would come from: "environment", the keys file's path, or None."""
    if os.environ.get(name):
        return "environment"
    try:
        return str(path()) if _read().get(name) else None
    except UsageError:
        return None


def names() -> list[str]:
    """The names stored in the keys file (never their values)."""
    return sorted(_read())


def stored_values() -> list[str]:
    """The values stored in the keys file, for redaction only (holon.providers.errors)."""
    return list(_read().values())


def check_name(name: str) -> str:
    """`name` when it is an environment variable's name. The error never repeats what was given:
    a key pasted where its name belongs must not reach the terminal or a log."""
    if not NAME.fullmatch(name):
        raise InvalidInput(
            "the key name must be an environment variable's name: letters, digits and _, "
            "not starting with a digit (what was given is not repeated here)",
            kind="invalid_key_name",
            hint="use the variable's name, e.g. OPENAI_API_KEY, and pass the key itself on "
            "standard input: holon keys set OPENAI_API_KEY -",
        )
    return name


def verify() -> None:
    """Raise `corrupt_keys` / `unreadable_keys` when the keys file exists but cannot be used."""
    _read()


def how_to_set(name: str) -> str:
    """The two ways to provide the key `name`, and why the file did not, when it is unusable."""
    hint = f"export {name}=... or run `holon keys set {name}` (the key on standard input)"
    try:
        _read()
    except UsageError as exc:
        hint += f"; note: {exc.message}"
    return hint


def report(known: dict[str, list[str]]) -> dict:
    """Where each stored or well-known key comes from, never its value. `known` maps the
    variables providers read to the provider ids that read them."""
    stored = _read()
    p = path()
    try:
        mode: str | None = f"{p.stat().st_mode & 0o777:04o}"
    except OSError:
        mode = None
    rows = []
    for name in sorted(set(stored) | set(known)):
        in_env = bool(os.environ.get(name))
        rows.append(
            {
                "name": name,
                "set": in_env or name in stored,
                "source": "environment" if in_env else str(p) if name in stored else None,
                "in_environment": in_env,
                "in_file": name in stored,
                "providers": sorted(known.get(name, [])),
            }
        )
    return {"file": {"path": str(p), "exists": mode is not None, "mode": mode}, "keys": rows}


def set_key(name: str, value: str) -> None:
    """Store `value` under `name` (replacing any earlier value), atomically, mode 0600."""
    check_name(name)
    value = value.strip()
    if not value or len(value) > MAX_VALUE or any(c in value for c in "\r\n\0"):
        raise InvalidInput(
            f"the value for {name} is empty, multi-line or too long",
            kind="invalid_key_value",
            hint='pass the key on standard input: printf %s "$KEY" | holon keys set NAME -',
        )
    with _locked():
        keys = _read()
        keys[name] = value
        _write(keys)


def remove(name: str) -> bool:
    """Forget `name`; False when it was not stored."""
    check_name(name)
    with _locked():
        keys = _read()
        if name not in keys:
            return False
        del keys[name]
        _write(keys)
    return True


@contextmanager
def _locked() -> Iterator[None]:
    """Serialise read-modify-write of the keys file across processes: flock on its directory (the
    file itself is replaced by rename, and a lock file would be one more thing in HOLON_HOME); the
    lock dies with its process. Two `holon keys set` at once both land."""
    p = path()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(keys: dict[str, str]) -> None:
    """Write the whole file beside itself with mode 0600 from the start, then rename it over."""
    p = path()
    p.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps({"keys": dict(sorted(keys.items()))}, indent=1) + "\n").encode("utf-8")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, p)
    dfd = os.open(p.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)

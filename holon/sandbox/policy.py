"""An agent's sandbox policy: `.holon/sandbox.json` (tracked, the operator's choice), else the
`[sandbox]` table of config.toml, else the default; and the environment its commands get.

    mode            read-only | workspace-write (default) | full-access
    network         deny (default) | allow: TCP connect and bind, where the kernel enforces it
    pass_env        variables (or fnmatch patterns) passed through although they look secret
    writable_roots  extra absolute directories writable in workspace-write

The environment policy, in every mode: variables whose names look like credentials (KEY, SECRET,
TOKEN, PASSWORD, PASSWD, CREDENTIAL, AUTH), every provider's `api_key_env` and every name in
keys.json are removed unless `pass_env` names them; HOLON_AGENT_ID, HOLON_AGENT_HOME and
HOLON_SANDBOX are set.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import Any

from holon import config, secretenv
from holon.errors import InvalidInput, OperationFailed
from holon.home.layout import DOT, Home, read_record
from holon.store.atomic import write_json

MODES = ("read-only", "workspace-write", "full-access")
NETWORK = ("deny", "allow")
DEFAULT_MODE, DEFAULT_NETWORK = "workspace-write", "deny"
SCHEMA_VERSION = 1
HINT = (
    f"fix {DOT}/sandbox.json or set it again: holon sandbox set AGENT MODE "
    f"(modes: {', '.join(MODES)}; network: {', '.join(NETWORK)})"
)


@dataclass(frozen=True)
class Policy:
    mode: str = DEFAULT_MODE
    network: str = DEFAULT_NETWORK
    pass_env: tuple[str, ...] = ()
    writable_roots: tuple[str, ...] = ()
    source: str = "default"  # "default", "config.toml" or the sandbox.json path

    @property
    def label(self) -> str:
        """What HOLON_SANDBOX says: `<mode>,network=<deny|allow>`."""
        return f"{self.mode},network={self.network}"

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "network": self.network,
            "pass_env": list(self.pass_env),
            "writable_roots": list(self.writable_roots),
        }


def _invalid(where: str, problem: str) -> OperationFailed:
    return OperationFailed(f"{where} {problem}", kind="invalid_sandbox_config", hint=HINT)


def parse(data: Any, where: str) -> Policy:
    """A Policy from a sandbox.json document or a config.toml table; fails closed on any doubt."""
    if not isinstance(data, dict):
        raise _invalid(where, "is not a JSON object")
    mode = data.get("mode", DEFAULT_MODE)
    if mode not in MODES:
        raise _invalid(where, f"has an unknown mode {mode!r}")
    network = data.get("network", DEFAULT_NETWORK)
    if network not in NETWORK:
        raise _invalid(where, f"has an unknown network setting {network!r}")
    lists = {}
    for key in ("pass_env", "writable_roots"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise _invalid(where, f"has an invalid {key}: a list of strings is expected")
        lists[key] = tuple(value)
    for root in lists["writable_roots"]:
        if not os.path.isabs(root) or "\0" in root:
            raise _invalid(where, f"has a writable root that is not an absolute path: {root!r}")
    return Policy(mode, network, lists["pass_env"], lists["writable_roots"], where)


def read(home: Home) -> Policy:
    data = read_record(home.sandbox_json, HINT)
    if data is not None:
        return parse(data, str(home.sandbox_json))
    table = config.get("sandbox")
    if table is not None:
        return parse(table, "config.toml [sandbox]")
    return Policy()


def write(home: Home, policy: Policy) -> Policy:
    write_json(home.sandbox_json, {"schema_version": SCHEMA_VERSION, **policy.to_json()})
    return read(home)


def choose(
    current: Policy,
    mode: str,
    network: str | None,
    pass_env: tuple[str, ...] | None,
    writable_roots: tuple[str, ...] | None,
) -> Policy:
    """`holon sandbox set`: full-access allows the network unless told otherwise."""
    if mode not in MODES:
        raise InvalidInput(
            f"unknown sandbox mode {mode!r}", hint=f"choose one of: {', '.join(MODES)}"
        )
    if network is None:
        network = "allow" if mode == "full-access" else current.network
    roots = current.writable_roots if writable_roots is None else writable_roots
    for root in roots:
        if not os.path.isabs(root):
            raise InvalidInput(
                f"writable root {root!r} is not an absolute path", hint="give an absolute path"
            )
    return Policy(
        mode,
        network,
        current.pass_env if pass_env is None else pass_env,
        tuple(os.path.normpath(r) for r in roots),
    )


def scrub(environ: dict[str, str], policy: Policy) -> dict[str, str]:
    """`environ` without what looks like a credential (holon.secretenv), unless the policy passes
    it on: what the agent's commands, and the processes that start them (supervisor, wrapper
    shell), get."""

    def passed(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in policy.pass_env)

    return secretenv.scrub(environ, keep=passed)


def command_env(
    environ: dict[str, str], policy: Policy, home: Home, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment a command of this agent runs with."""
    env = scrub(environ, policy)
    env.update(
        HOLON_AGENT_ID=home.agent_id, HOLON_AGENT_HOME=str(home.root), HOLON_SANDBOX=policy.label
    )
    env.update(extra or {})
    return env

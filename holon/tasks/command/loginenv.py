"""The environment a login shell gives, captured once per process and reused.

A command with `login` (the default) used to run as `shell -l -c CMD`: the profile ran for
every command, and whatever it printed landed in every tool result. Instead the login shell runs
once per tick process, shell and confinement: `shell -l -c 'env -0'` in the same sandbox as the
command (its argv prefix and preexec), stdin empty, its stderr discarded, only the NUL-separated
environment read from stdout. Each command then runs as a plain `shell -c CMD` with that
environment; names the sandbox scrubs (holon.sandbox.policy.command_env) stay scrubbed, and
holon's own variables keep the values the confinement set. A login shell that fails, hangs or
prints no environment leaves the confinement's environment as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from holon.home.layout import Home
from holon.sandbox.confine import Confinement
from holon.sandbox.policy import command_env

CAPTURE_TIMEOUT_S = 10.0
MAX_BYTES = 1 << 20
SHELL_OWN = frozenset(("_", "PWD", "OLDPWD", "SHLVL"))  # the command's own shell sets these
_captured: dict[tuple, dict[str, str]] = {}


def environment(shell: str, workdir: Path, confinement: Confinement) -> dict[str, str]:
    """The environment for a login command run with `shell` under `confinement`."""
    key = (shell, confinement.policy.label, tuple(sorted(confinement.env.items())))
    if key not in _captured:
        _captured[key] = _capture(shell, workdir, confinement)
    return dict(_captured[key])


def _capture(shell: str, workdir: Path, confinement: Confinement) -> dict[str, str]:
    base = confinement.env
    argv = confinement.argv_prefix + [shell, "-l", "-c", "exec env -0"]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=base,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=confinement.preexec,
        )
    except (OSError, subprocess.SubprocessError):
        return dict(base)
    try:
        out, _ = proc.communicate(timeout=CAPTURE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return dict(base)
    if proc.returncode != 0 or not out or len(out) > MAX_BYTES:
        return dict(base)
    found = dict(
        part.split("=", 1)
        for part in out.decode("utf-8", "surrogateescape").split("\0")
        if "=" in part and not part.startswith("=")
    )
    return _scrubbed(found, confinement)


def _scrubbed(found: dict[str, str], confinement: Confinement) -> dict[str, str]:
    base = confinement.env
    home = Home(base.get("HOLON_AGENT_HOME", "/"), base.get("HOLON_AGENT_ID"))
    kept = command_env(
        {k: v for k, v in found.items() if k not in SHELL_OWN}, confinement.policy, home
    )
    for name, value in base.items():
        if name.startswith("HOLON_") or name == "TMPDIR":
            kept[name] = value  # what the confinement decided, whatever a profile says
    return kept


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()

"""The one way holon runs git: never code the agent could have written, never with a secret.

An agent's commands can write a repository's `.git/` (hooks, config, info/attributes) and its
`.gitattributes`; holon runs git outside the sandbox, as the operator. So every git holon runs:

1. reads the configuration git would see (`git config --list --includes --show-origin`, which
   runs nothing), and the files of every conditional include whatever its condition (a child
   git in a new worktree may satisfy a condition the listing did not);
2. overrides on its command line (which wins over every file) each key found that names a
   program — filter clean/smudge/process (and `required`), diff textconv/command, merge drivers,
   credential helpers, configured hooks, gpg programs, pagers, and any variable whose name ends
   in command, cmd, program, helper, hook, editor, pager, askpass, proxy, driver or filter —
   with a neutral value, plus fixed overrides: hooks in a directory below /dev/null (nothing can
   create it, so no hook file is found: pre-commit, post-checkout, reference-transaction, ...),
   no fsmonitor, no signing, no pager, no transport (`protocol.allow=never`, no lazy fetch), no
   submodule recursion, no automatic gc;
3. runs with the environment holon's sandbox gives commands (holon.secretenv: no provider key,
   no variable that looks secret), `GIT_TERMINAL_PROMPT=0`, no editor, stdin from /dev/null, in
   its own session, killed as a group after a timeout.

What is left: a key written between the listing and git's own reading (a race with a running
background command) is not overridden when its name is the repository's choice (a filter,
diff or merge driver name); the fixed overrides hold regardless.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from holon import secretenv
from holon.errors import HolonError

GIT_TIMEOUT = 60.0
NO_HOOKS = "/dev/null/holon-no-hooks"  # below a device: no directory can ever exist there
FIXED = (
    ("core.hooksPath", NO_HOOKS),
    ("core.fsmonitor", "false"),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.askPass", ""),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.pager", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),  # an empty value empties the list of helpers
    ("diff.external", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("uploadpack.packObjectsHook", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
EXEC_SUFFIXES = (
    "command", "cmd", "program", "helper", "hook", "editor", "pager", "askpass", "proxy", "driver",
    "filter",
)  # fmt: skip
EXEC_VARS = {"filter": ("clean", "smudge", "process"), "diff": ("textconv",)}
STRIP_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_EXTERNAL_DIFF",
)  # fmt: skip
FIXED_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "LC_ALL": "C",
}
MAX_INCLUDE_DEPTH = 10  # git's own limit


class GitError(HolonError):
    kind = "git_failed"


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git holon runs gets: scrubbed of secrets, no prompt, no editor."""
    env = {k: v for k, v in secretenv.scrub(os.environ).items() if k not in STRIP_ENV}
    env.update(FIXED_ENV)
    env.update(extra or {})
    return env


def run(
    cwd: Path,
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = GIT_TIMEOUT,
) -> subprocess.CompletedProcess:
    """`git -C cwd <overrides> args...`, output as text; raises GitError only when git cannot be
    run or does not finish (`git_unavailable`, `git_timeout`); an exit status is the caller's."""
    environ = environment(env)
    base = ["git", "--no-pager", "-C", os.fspath(cwd)]
    listing = _exec([*base, *_flags(FIXED), *_LIST], None, environ, timeout)
    if listing.returncode != 0:
        return listing  # git cannot read its configuration: the command would fail the same way
    overrides = neutralised(_keys(listing.stdout, environ, timeout))
    return _exec([*base, *_flags(FIXED + overrides), *args], input, environ, timeout)


_LIST = ("config", "--null", "--list", "--includes", "--show-origin")


def _flags(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def neutralised(keys: list[str]) -> tuple[tuple[str, str], ...]:
    """The neutral `-c` value of every key that names a program ((key, value) pairs)."""
    out: list[tuple[str, str]] = []
    for key in dict.fromkeys(keys):
        section, _, rest = key.partition(".")
        sub, _, var = rest.rpartition(".")
        section, var = section.lower(), var.lower()
        if section == "pager":
            out.append((key, "false"))
        elif section == "filter" and var == "required":
            out.append((key, "false"))
        elif var.endswith(EXEC_SUFFIXES) or var in EXEC_VARS.get(section, ()):
            out.append((key, ""))
            if section == "hook" and sub:
                out.append((f"hook.{sub}.enabled", "false"))
    return tuple(out)


def _keys(listing: str, env: dict[str, str], timeout: float, depth: int = 0) -> list[str]:
    """The keys of a `--null --show-origin` listing, and those of every file a conditional
    include names (read whatever the condition says)."""
    fields = listing.split("\0")
    keys: list[str] = []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        if origin.startswith("command line:"):
            continue  # holon's own overrides, or the operator's GIT_CONFIG_PARAMETERS
        key, _, value = entry.partition("\n")
        keys.append(key)
        if key.lower().startswith("includeif.") and key.lower().endswith(".path") and value:
            path = _include_target(origin, value)
            if path is not None and depth < MAX_INCLUDE_DEPTH:
                keys += _file_keys(path, env, timeout, depth + 1)
    return keys


def _include_target(origin: str, value: str) -> Path | None:
    path = Path(os.path.expanduser(value))
    if path.is_absolute():
        return path
    if origin.startswith("file:"):
        return Path(origin[len("file:") :]).parent / path
    return None  # relative to a blob or the command line: git itself cannot resolve it


def _file_keys(path: Path, env: dict[str, str], timeout: float, depth: int) -> list[str]:
    if not path.is_file():
        return []
    args = ["git", *_flags(FIXED), "config", "--file", os.fspath(path), *_LIST[1:]]
    proc = _exec(args, None, env, timeout)
    return _keys(proc.stdout, env, timeout, depth) if proc.returncode == 0 else []


def _exec(
    argv: list[str], input: str | None, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitError("git is not installed", kind="git_unavailable", hint="install git") from None
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise GitError(
            f"git {_subcommand(argv)} did not finish in {timeout:g} s",
            kind="git_timeout",
            hint="check the repository (a lock file left behind, a huge work tree)",
        ) from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _subcommand(argv: list[str]) -> str:
    """The git subcommand of `argv` (what follows the global options), for messages."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-C", "-c") else 1
    return argv[i] if i < len(argv) else ""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.communicate()

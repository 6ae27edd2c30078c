"""`holon completion bash|zsh|fish` through the real entry point: the script, and the candidates
the shell gets back for commands, options, agent ids, task ids and work item ids."""

from __future__ import annotations

import pytest
from helpers import run, subprocess_env

from holon.cli.completion import SHELLS
from holon.home.init import init_home
from holon.ops import tools, work


def complete(*words: str) -> list[str]:
    """What bash completion offers for the last of `words` (the line typed so far)."""
    env = subprocess_env(
        _HOLON_COMPLETE="bash_complete",
        COMP_WORDS=" ".join(["holon", *words]),
        COMP_CWORD=str(len(words)),
    )
    r = run(env=env)
    assert r.returncode == 0, r.stderr
    return [line.split(",", 1)[1] for line in r.stdout.splitlines() if line]


MARKERS = {"bash": "complete -o", "zsh": "compdef", "fish": "complete --no-files --command holon"}


@pytest.mark.parametrize("shell, marker", sorted(MARKERS.items()))
def test_the_script_for_each_shell(shell, marker):
    assert shell in SHELLS
    r = run("completion", shell)
    assert r.returncode == 0 and marker in r.stdout and "_HOLON_COMPLETE" in r.stdout


def test_commands_options_and_ids_complete(holon_env):
    alpha = init_home(None, "alpha")
    init_home(None, "beta")
    assert complete("sta") == ["status"]
    assert complete("status", "a") == ["alpha"]
    assert complete("status", "") == ["alpha", "beta"]
    assert "--json" in complete("status", "alpha", "--j")
    item = work.create(alpha, "ship it")["id"]
    assert complete("work", "show", "alpha", "") == [item]
    args = {"cmd": "sleep 30", "login": False, "yield_time_ms": 50}
    task = tools.call(alpha, "ExecCommand", args).envelope["result"]["task_handle"]["task_id"]
    try:
        assert complete("task", "stop", "alpha", "") == [task]
        assert complete("task", "stop", "alpha", task[:6]) == [task]
        assert complete("task", "stop", "nobody", "") == []
    finally:
        run("task", "stop", "alpha", task)


def test_an_unknown_shell_is_a_usage_error():
    r = run("completion", "tcsh")
    assert r.returncode == 2 and r.stderr.startswith("holon: usage: ")

"""A scheduler's idle `holon tick` runs without click (holon.cli.entry -> holon.cli.tickfast): the
same output, exit code, tick.log and due index as through click; a due agent, a full pass over
every home, an error and any other command line are left to click, which runs them once."""

from __future__ import annotations

import os
import re
import shutil
import time

import pytest

from holon.agent import admission
from holon.cli import entry, tickfast, ticking
from holon.cli import main as click_main
from holon.home import dueindex
from holon.home.init import init_home
from holon.ops import ticklog
from holon.paths import agents_dir, registry_path

TIME = (re.compile(r"== \S+ holon tick (.*) \(pid \d+\)"), r"== <TIME> holon tick \1 (pid <PID>)")


@pytest.fixture
def paths(monkeypatch):
    """(the command lines entry.main left to click, click's own main)."""
    handed: list[list[str]] = []
    real = click_main.main

    def full(argv=None):
        handed.append(list(argv))
        return real(argv)

    monkeypatch.setattr(click_main, "main", full)
    return handed, real


def _settled() -> None:
    """Date registry.json and the agents directory back: a pass right after a change to them
    does not trust its record, and the next pass is a full one again."""
    past = time.time() - 60
    for path in (registry_path(), agents_dir()):
        if path.exists():
            os.utime(path, (past, past))


@pytest.fixture
def homes(holon_env, paths):
    """Agents a and b, idle, each pass (all, and both shards of 2) recorded once by click."""
    _, real = paths
    a, b = init_home(None, "a"), init_home(None, "b")
    _settled()
    for shard in ([], ["--shard", "0/2"], ["--shard", "1/2"]):
        assert real(["tick", "--all", *shard]) == 0
    return a, b


def _state() -> tuple[list[str], str]:
    """The due index and the tick log, as both paths must leave them."""
    log = ticklog.log_path()
    text = log.read_text() if log.exists() else ""
    return sorted(os.listdir(dueindex.index_dir())), TIME[0].sub(TIME[1], text)


def _both(argv, capsys, real) -> list[tuple]:
    """(fast path result, click result) on the same homes, one after the other: (exit code,
    stdout, stderr, due index, what the run added to tick.log)."""
    results = []
    for main in (entry.main, real):
        index, before = _state()
        rc = main(list(argv))
        out, err = capsys.readouterr()
        index, after = _state()
        results.append((rc, out, err, index, after[len(before) :]))
    return results


IDLE = [
    ["tick", "a"],
    ["tick", "a", "b", "--json"],
    ["tick", "b", "a", "--log"],
    ["tick", "--all"],
    ["tick", "--json", "--all"],
    ["tick", "--all", "--log"],
    ["tick", "--all", "--shard", "1/2", "--json"],
    ["tick", "--shard=0/2", "--all", "--log"],
]


@pytest.mark.parametrize("argv", IDLE, ids=" ".join)
def test_an_idle_tick_is_clicks_without_click(homes, paths, capsys, argv):
    handed, real = paths
    fast, slow = _both(argv, capsys, real)
    assert fast == slow
    assert handed == []  # the fast path did it all
    assert fast[0] == 0 and fast[2] == "" and fast[4] == ""  # idle: nothing on stderr or logged


@pytest.mark.parametrize("extra", [[], ["--json"], ["--log"]], ids=str)
def test_broken_homes_are_reported_and_logged_as_click_does(holon_env, paths, capsys, extra):
    handed, real = paths
    init_home(None, "a")
    gone = init_home(str(holon_env.parent / "elsewhere"), "b")
    shutil.rmtree(gone.root)
    _settled()
    assert real(["tick", "--all"]) == 1  # the full pass finds b missing
    capsys.readouterr()
    fast, slow = _both(["tick", "--all", *extra], capsys, real)
    assert fast == slow and handed == []
    said = fast[1] + fast[2] + fast[4]
    assert fast[0] == 1 and "missing" in said and str(gone.root) in said


@pytest.mark.parametrize(
    "argv",
    [
        ["tick", "a", "nobody"],
        ["tick", "nobody", "--json"],
        ["tick", "--all", "--shard", "9/2"],
        ["tick", "--all", "--shard", "x", "--log"],
    ],
    ids=" ".join,
)
def test_an_error_is_clicks_word_for_word(homes, paths, capsys, argv):
    handed, real = paths
    fast, slow = _both(argv, capsys, real)
    assert fast == slow and fast[0] != 0 and (fast[2] or fast[4])
    assert handed == [argv]


def test_a_due_named_agent_is_ticked_by_click_once(homes, paths, capsys, script, monkeypatch):
    handed, _ = paths
    a, _b = homes
    monkeypatch.setenv("HOLON_MODEL", script({"text": "done"}))
    admission.admit(a, "enqueue", "system_tick", admission.text_body("hi"))
    assert entry.main(["tick", "b", "a"]) == 0
    out, err = capsys.readouterr()
    assert handed == [["tick", "b", "a"]]
    assert out.startswith("a: ran\n  msg_") and out.endswith(" completed\n") and err == ""
    assert a.queue.depth() == 0


def test_a_due_agent_under_all_is_ticked_by_click_once(homes, paths, capsys, script, monkeypatch):
    handed, _ = paths
    _a, b = homes
    monkeypatch.setenv("HOLON_MODEL", script({"text": "done"}))
    admission.admit(b, "enqueue", "system_tick", admission.text_body("hi"))
    assert entry.main(["tick", "--all", "--log"]) == 0
    assert handed == [["tick", "--all", "--log"]]
    assert capsys.readouterr() == ("", "")
    assert b.queue.depth() == 0 and "b: ran" in ticklog.log_path().read_text()


def test_a_full_pass_is_clicks(holon_env, paths, capsys):
    handed, _ = paths
    init_home(None, "a")
    _settled()
    assert entry.main(["tick", "--all"]) == 0  # no pass recorded yet: every home is read
    assert handed == [["tick", "--all"]]
    assert entry.main(["tick", "--all"]) == 0  # the index is current now
    assert handed == [["tick", "--all"]]


@pytest.mark.parametrize(
    "argv",
    [
        ["tick"],
        ["tick", "--all", "a"],
        ["tick", "a", "--shard", "0/2"],
        ["tick", "a", "--log", "--json"],
        ["tick", "a", "--json", "--json"],
        ["tick", "--all", "--shard", "0/2", "--shard", "1/2"],
        ["tick", "--all", "--shard"],
        ["tick", "--all", "--shard", "--log"],
        ["tick", "a", "--wait"],
        ["tick", "a", "--until-idle"],
        ["tick", "a", "--model", "x/y"],
        ["tick", "a", "--commit"],
        ["tick", "--", "a"],
        ["tick", "-h"],
        ["tick", "a\udcff"],
        ["tock", "a"],
    ],
    ids=repr,
)
def test_anything_but_a_schedulers_plain_tick_is_clicks(argv):
    assert tickfast.parse(argv) is None


def test_the_plain_forms_parse():
    assert tickfast.parse(["tick", "a", "--log", "b"]) == {
        "agents": ("a", "b"),
        "shard": None,
        "all_agents": False,
        "as_json": False,
        "log": True,
    }
    assert tickfast.parse(["tick", "--shard=1/4", "--json", "--all"])["shard"] == "1/4"


@pytest.mark.parametrize("err", [False, True])
def test_write_is_click_echo_in_the_click_group(capsysbinary, err):
    """The fast path prints with ticking.write what the click path prints with click.echo (the
    root group runs with color=True: escape sequences are kept for a pipe)."""
    import click

    text = "b: missing /x\n  é \x1b[31m"
    ticking.write(text, err=err)
    fast = capsysbinary.readouterr()
    with click.Context(click.Command("tick"), color=True):
        click.echo(text, err=err)
    assert capsysbinary.readouterr() == fast and (fast.err if err else fast.out)


def test_shell_completion_is_clicks(monkeypatch):
    assert tickfast.parse(["tick", "a"]) is not None
    monkeypatch.setenv("_HOLON_COMPLETE", "bash_complete")
    assert tickfast.parse(["tick", "a"]) is None

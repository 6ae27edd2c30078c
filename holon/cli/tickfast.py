"""`holon tick` without click when nothing is due: cron, systemd timers and `holon watch` run an
idle tick every minute for every agent, each a new process, where importing click would be a
third of the cost.

`parse` takes only what schedulers write: `tick AGENT...` or `tick --all [--shard K/N]`, with
`--log` or `--json`, each option once. `run` runs the command's own functions
(`holon.cli.ticking`) with a per-agent tick that gives up: when a named agent has due work, or
`--all` finds one (or its pass would be a full one, which reads every home), when anything
raises, or when the output would need click's stream handling, it returns None and the caller
hands the same argv to click, which does the tick (and reports any error) itself. So the fast
path's output, log and exit code are the click path's, and nothing it did is done twice: a
named agent is only read; an `--all` pass settles the index entries of the agents it found idle
before the due one, as the click path would, and click's pass no longer sees them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from holon.cli import ticking
from holon.text import encodes_utf8

_FLAGS = {"--all": "all_agents", "--json": "as_json", "--log": "log"}


class _Due(Exception):
    """An agent has work to do: the whole command is click's."""


def parse(args: list[str]) -> dict[str, Any] | None:
    """The options of a scheduler's plain `holon tick`; None for anything else."""
    if not args or args[0] != "tick" or "_HOLON_COMPLETE" in os.environ:  # the shell asks click
        return None
    out: dict[str, Any] = {"agents": [], "shard": None} | dict.fromkeys(_FLAGS.values(), False)
    rest = iter(args[1:])
    for arg in rest:
        if not encodes_utf8(arg):
            return None
        if arg in _FLAGS and not out[_FLAGS[arg]]:
            out[_FLAGS[arg]] = True
        elif (arg == "--shard" or arg.startswith("--shard=")) and out["shard"] is None:
            value = arg.partition("=")[2] if "=" in arg else next(rest, "-")
            if value.startswith("-") or not encodes_utf8(value):
                return None
            out["shard"] = value
        elif arg.startswith("-"):
            return None
        else:
            out["agents"].append(arg)
    if bool(out["agents"]) == out["all_agents"] or (out["log"] and out["as_json"]):
        return None
    if out["shard"] is not None and not out["all_agents"]:
        return None
    return {**out, "agents": tuple(out["agents"])}


def run(options: dict[str, Any]) -> int | None:
    """The exit code of an idle tick, its report printed or logged as click's path does; None
    (nothing printed) when click must run the command."""
    agents, all_agents = options["agents"], options["all_agents"]
    reports: list[dict] = []
    if not _plain(sys.stdout) or not _plain(sys.stderr):
        return None
    try:
        if all_agents and _full_pass(options["shard"]):
            return None
        code = ticking.run(agents, all_agents, reports, _hand_off, shard=options["shard"])
    except Exception:  # _Due, or an error: click's path does it, and reports it, itself
        return None
    if options["log"]:
        return ticking.logged(lambda: code, reports, agents, all_agents, ticking.write)
    ticking.show(reports, options["as_json"], ticking.write)
    return code


def _hand_off(home: Any, reraise: bool) -> dict:
    raise _Due(home.agent_id)


def _full_pass(shard: str | None) -> bool:
    """Would `--all` list every home? Then it is click's: its time is the pass, not the import."""
    from holon.home import dueindex
    from holon.home.shard import parse

    label = parse(shard).label if shard is not None else None
    return not dueindex.ensure() or dueindex.needs_full_pass(label)[0]


def _plain(stream: Any) -> bool:
    """A stream click.echo writes to as it is (click re-wraps one whose encoding is ASCII)."""
    import codecs

    try:
        return stream is not None and codecs.lookup(stream.encoding).name != "ascii"
    except (AttributeError, LookupError, TypeError):
        return False

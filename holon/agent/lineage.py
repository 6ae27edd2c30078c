"""Lineage: which agent's limits bind an agent that another agent created.

An agent created from inside a turn (SpawnAgent) is bound by its creator: a private child lives
in its parent's children directory (`Home.parent_root`); a public agent made with
`preset=public_named` names its creator's home in its agent.json (`lineage_parent_home`), and
the creator lists it in `.holon/spawned.jsonl` before the new home exists (log, then change).
Both count against the creator's delegation depth, live children and daily token budget, and
the creator's own creator's, up to the lineage root: a lineage never creates agents, or
spends tokens, its root could not. An agent the operator made has no creator: it is a root.

Stdlib only: the budget check reads this before every provider request.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from holon.errors import HolonError
from holon.home.layout import Home, is_home, read_identity
from holon.store import jsonl

MAX_CHAIN = 64  # a hand-made loop of lineage_parent_home is cut here, never followed forever


def creator(home: Home) -> Home | None:
    """The home of the agent whose limits bind `home`: its supervising parent, else the agent
    that spawned it as a public agent (while that home exists), else None (a root)."""
    if home.parent_root is not None:
        return Home(home.parent_root) if is_home(home.parent_root) else None
    made_by = read_identity(home.agent_json).get("lineage_parent_home")
    if isinstance(made_by, str) and made_by and is_home(made_by):
        return Home(made_by)
    return None


def ancestors(home: Home) -> Iterator[Home]:
    """Each agent above `home`, nearest first, up to the lineage root."""
    seen = {os.path.realpath(home.root)}
    above = creator(home)
    while above is not None and len(seen) <= MAX_CHAIN:
        key = os.path.realpath(above.root)
        if key in seen:
            return
        seen.add(key)
        yield above
        above = creator(above)


def depth(home: Home) -> int:
    """0 for an agent the operator made, 1 for one its turns created, 2 below that..."""
    return sum(1 for _ in ancestors(home))


def root_of(home: Home) -> Home:
    top = home
    for top in ancestors(home):  # noqa: B007 - the last one is the root
        pass
    return top


def new_public_lineage(creator_home: Home) -> dict[str, Any]:
    """The agent.json lineage fields (beside `lineage_parent_agent_id`) of a public agent that
    `creator_home`'s turn creates."""
    return {
        "lineage_parent_home": os.fspath(creator_home.root),
        "lineage_root_agent_id": root_of(creator_home).agent_id,
        "lineage_depth": depth(creator_home) + 1,
    }


def record_spawn(creator_home: Home, agent_id: str, root: Path) -> None:
    """List a public agent in its creator's `.holon/spawned.jsonl`, before its home is made."""
    jsonl.append(creator_home.spawned, {"agent_id": agent_id, "home": os.fspath(root)})


def live_spawned(creator_home: Home, registered: dict[str, str]) -> list[Home]:
    """The public agents `creator_home` created that are still registered (`registered`: the
    registry's id -> home): each holds one of its live-children places until the operator
    forgets it (`holon agents forget`)."""
    return [
        h
        for h in spawned(creator_home)
        if any(os.path.realpath(p) == os.path.realpath(h.root) for p in registered.values())
    ]


def spawned(creator_home: Home) -> list[Home]:
    """The public agents `creator_home` created that exist and name it as their creator (a line
    whose home was never made, or was made again by someone else, binds nothing)."""
    out, seen = [], set()
    mine = os.path.realpath(creator_home.root)
    for rec in jsonl.read(creator_home.spawned):
        path = rec.get("home")
        if not isinstance(path, str) or path in seen or not is_home(path):
            continue
        seen.add(path)
        try:
            made_by = read_identity(Home(path).agent_json).get("lineage_parent_home")
        except HolonError:  # a home whose agent.json is corrupt still counts: fail closed
            made_by = creator_home.root
        if isinstance(made_by, (str, Path)) and os.path.realpath(made_by) == mine:
            out.append(Home(path))
    return out

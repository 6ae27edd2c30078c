"""Task tests start real process groups: whatever a test leaves running is stopped after it.
`unconfined` builds the Confinement of a command started without a sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon.home.layout import Home
from holon.procs import group_members
from holon.sandbox.confine import Confinement
from holon.sandbox.policy import Policy
from holon.tasks import store
from holon.tasks.command import spawn


def _started_for(pgid: int, home: Home) -> bool:
    """Does a live member of group `pgid` carry this home's HOLON_AGENT_HOME (from command.run)?"""
    marker = f"HOLON_AGENT_HOME={home.root}".encode()
    for pid in group_members(pgid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if marker in fh.read().split(b"\0"):
                    return True
        except OSError:
            continue
    return False


@pytest.fixture(autouse=True)
def stop_leftover_tasks(holon_env: Path):
    yield
    agents = holon_env / "agents"
    for root in sorted(agents.iterdir()) if agents.is_dir() else ():
        home = Home(root, root.name)
        for rec in store.all_records(home):
            pgid = int(rec.get("pid") or 0)
            if rec.get("status") == "running" and pgid > 1 and _started_for(pgid, home):
                spawn.kill_group(pgid, grace=0.2)


def _unconfined(agent_id: str, agent_home: Path | str, **extra: str) -> Confinement:
    env = {**os.environ, "HOLON_AGENT_ID": agent_id, "HOLON_AGENT_HOME": str(agent_home), **extra}
    return Confinement(Policy(mode="full-access", network="allow"), env, "none")


@pytest.fixture
def unconfined():
    """Build a Confinement without a sandbox, for spawn-level tests: full access, network
    allowed, the whole environment plus the agent variables command.run sets (and `extra`)."""
    return _unconfined

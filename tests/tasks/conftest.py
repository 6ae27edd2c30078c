"""Task tests start real process groups: whatever a test leaves running is stopped after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.home.layout import Home
from holon.procs import group_members
from holon.tasks import spawn, store


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

"""Read paths that take the run state without pydantic when the stored state is current
(holon.home.stateview): `holon work list|show` and `holon model show` say exactly what the full
read says, and as processes they do not import pydantic."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT
from scenario_helpers import cli

from holon.agent.handle import Agent
from holon.home import stateview
from holon.ops import work


@pytest.fixture
def focused(agent):
    """Agent `a` working on an item, with a task running and a model of its own."""
    current = work.create(agent, "Current")
    work.create(agent, "Next")

    def change(s):
        s.current_work_item_id = current["id"]
        s.active_task_ids = ["task_1"]
        s.model_override = "scripted/own"

    Agent(agent).update_state(change)
    assert stateview.current(agent) is not None
    return agent, current["id"]


def test_light_and_full_reads_agree(focused, monkeypatch):
    home, current = focused
    light = [cli("work", "list", "a", "--json"), cli("work", "show", "a", current)]
    light.append(cli("model", "show", "a", "--json"))
    assert [rc for rc, _, _ in light] == [0, 0, 0], light
    assert '"readiness": "current"' in light[0][1] and "scripted/own" in light[2][1]
    monkeypatch.setattr(stateview, "current", lambda home: None)  # the full read, pydantic
    full = [cli("work", "list", "a", "--json"), cli("work", "show", "a", current)]
    full.append(cli("model", "show", "a", "--json"))
    assert light == full


PROBE = (
    "import sys, runpy; sys.argv = ['holon'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('holon', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "sys.stderr.write('PYDANTIC:%s' % ('pydantic' in sys.modules))\n"
)


@pytest.mark.parametrize("args", [["work", "list", "a"], ["model", "show", "a"]])
def test_the_light_reads_do_not_import_pydantic(focused, args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env
    )
    assert proc.stdout and proc.stderr.endswith("PYDANTIC:False"), proc.stderr

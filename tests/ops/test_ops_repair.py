"""holon.ops.repair (`holon doctor --repair`): what is derived is set aside and rebuilt; what an
operator chose is reported, never discarded."""

from __future__ import annotations

import json
import os

from helpers import run

from holon.ops import repair
from holon.paths import registry_path


def test_repair_rebuilds_the_registry_the_run_state_and_sets_a_wake_hint_aside(agent):
    registry_path().write_text('{"agents": [')
    agent.state_json.write_text("<<<<<<< HEAD\n")
    os.mkfifo(agent.wake_hint)
    actions = repair.repair()
    assert [(os.path.basename(a["file"]), a["action"]) for a in actions] == [
        ("registry.json", "rebuilt"),
        ("state.json", "rebuilt"),
        ("wake_hint.json", "set_aside"),
    ]
    assert json.loads(registry_path().read_text())["agents"] == {"a": "agents/a"}  # relative
    assert not os.path.lexists(agent.wake_hint)
    assert repair.repair() == []  # nothing left to do


def test_repair_reports_what_only_the_operator_can_restore(agent):
    agent.settings_json.write_text("[")
    (action,) = repair.repair(["a"])
    assert action["action"] == "failed" and action["detail"].startswith("corrupt_state: ")
    assert "git checkout" in action["hint"]
    assert agent.settings_json.read_text() == "["  # untouched


def test_doctor_repair_through_the_cli(agent):
    registry_path().write_text("null")
    proc = run("doctor", "--repair", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert [a["action"] for a in doc["repaired"]] == ["rebuilt"]
    assert not [f for f in doc["findings"] if f["check"] == "registry"]


def test_doctor_fix_writes_the_holon_home_gitignore_once(agent):
    ignore = registry_path().parent / ".gitignore"
    ignore.unlink(missing_ok=True)
    found = json.loads(run("doctor", "--json").stdout)["findings"]
    assert [f["fix"] for f in found if f["check"] == "gitignore"] == ["holon doctor --fix"]
    proc = run("doctor", "--fix", "--json")
    assert [a["action"] for a in json.loads(proc.stdout)["repaired"]] == ["written"], proc.stderr
    assert "/keys.json" in ignore.read_text().splitlines()
    ignore.write_text("# the operator's own\n")
    assert json.loads(run("doctor", "--fix", "--json").stdout)["repaired"] == []
    assert ignore.read_text() == "# the operator's own\n"  # never replaced

"""holon.home.registry.scan() and forget(): broken homes are reported beside the usable ones, and
forgetting an agent changes the registry only."""

from __future__ import annotations

import json
import shutil

import pytest

from holon.errors import UsageError
from holon.home import registry
from holon.home.init import init_home
from holon.paths import agents_dir, registry_path


def test_scan_splits_usable_homes_from_missing_and_broken_ones(holon_env, tmp_path):
    init_home(None, "a")
    gone = init_home(str(tmp_path / "gone"), "gone")
    hollow = init_home(str(tmp_path / "hollow"), "hollow")
    (agents_dir() / "stray").mkdir()  # a directory that never was a home: not an agent
    init_home(None, "noid")
    shutil.rmtree(gone.root)
    hollow.agent_json.unlink()
    (agents_dir() / "noid" / ".holon" / "agent.json").unlink()
    (agents_dir() / "a" / ".holon" / "state.json").write_text("<<<<<<< HEAD\n")

    homes, broken = registry.scan()
    assert [(h.agent_id, h.root) for h in homes] == [("a", agents_dir() / "a")]
    assert broken == [
        {
            "agent_id": "gone",
            "home": str(gone.root),
            "status": "missing",
            "problem": "the registered home no longer exists",
            "file": str(gone.root),
        },
        {
            "agent_id": "hollow",
            "home": str(hollow.root),
            "status": "broken",
            "problem": "agent.json is missing",
            "file": str(hollow.agent_json),
        },
        {
            "agent_id": "noid",
            "home": str(agents_dir() / "noid"),
            "status": "broken",
            "problem": "agent.json is missing",
            "file": str(agents_dir() / "noid" / ".holon" / "agent.json"),
        },
    ]
    assert [h.agent_id for h in registry.all_homes()] == ["a", "gone", "hollow", "noid"]


def test_scan_parses_no_state_and_survives_a_corrupt_registry(holon_env):
    home = init_home(None, "a")
    home.agent_json.write_text("<<<<<<< HEAD\n")  # scan only checks that it is there
    home.state_json.write_text("<<<<<<< HEAD\n")
    registry_path().write_text("{not json")
    homes, broken = registry.scan()
    assert [h.agent_id for h in homes] == ["a"]
    (entry,) = broken
    assert (entry["agent_id"], entry["status"], entry["file"]) == (
        None,
        "broken",
        str(registry_path()),
    )
    assert "cannot be read" in entry["problem"]
    with pytest.raises(UsageError) as err:
        registry.load()
    assert err.value.kind == "corrupt_registry" and err.value.hint


def test_scan_of_an_empty_holon_home(holon_env):
    assert registry.scan() == ([], [])


def test_forget_removes_the_entry_and_touches_no_file(holon_env, tmp_path):
    home = init_home(str(tmp_path / "b"), "b")
    init_home(str(tmp_path / "c"), "c")
    before = sorted(p for p in home.root.rglob("*"))
    assert registry.forget("b") == str(home.root)
    assert list(registry.load()) == ["c"]
    assert sorted(p for p in home.root.rglob("*")) == before
    assert json.loads(registry_path().read_text())["agents"] == {"c": str(tmp_path / "c")}


def test_forget_refuses_unknown_ids_and_homes_found_by_directory(holon_env):
    with pytest.raises(UsageError) as err:
        registry.forget("nobody")
    assert err.value.kind == "not_registered" and "registry.json" in err.value.hint
    init_home(None, "a")  # registered, and found by its directory under agents/
    with pytest.raises(UsageError) as err:
        registry.forget("a")
    assert err.value.kind == "not_registered"
    assert "finds by its directory" in err.value.message and "move" in err.value.hint
    assert "a" in registry.load()
    registry.unregister("a")  # only the directory is left
    with pytest.raises(UsageError) as err:
        registry.forget("a")
    assert err.value.kind == "not_registered" and "directory" in err.value.message


def test_forget_a_deleted_home_under_agents(holon_env):
    home = init_home(None, "a")
    shutil.rmtree(home.root)
    assert registry.forget("a") == str(home.root)
    assert registry.scan() == ([], [])


def test_a_home_a_killed_init_left_is_nobodys_agent(holon_env):
    """`holon init` stages `.<name>.init-<pid>-*` and renames it into place; killed before the
    rename, it leaves a complete-looking home there: `holon agents`, `tick --all` and doctor
    never list it, and the next init of that name removes it."""
    from helpers import run

    init_home(None, "a")
    staged = agents_dir() / ".b.init-999999999-x1"
    shutil.copytree(agents_dir() / "a", staged)
    (staged / ".holon" / "agent.json").write_text(json.dumps({"agent_id": "b"}))
    listed = json.loads(run("agents", "--all", "--json").stdout)
    assert [row["agent_id"] for row in listed] == ["a"]
    ticked = json.loads(run("tick", "--all", "--json").stdout)
    assert [agent["agent_id"] for agent in ticked["agents"]] == ["a"]
    assert str(staged) not in run("doctor", "--json").stdout
    assert [h.agent_id for h in registry.all_homes()] == ["a"]
    init_home(None, "b")
    assert not staged.exists() and (agents_dir() / "b").is_dir()

"""holon.home.registry: agent ids, the id -> path registry, and resolution of an AGENT argument."""

from __future__ import annotations

import os

import pytest

from holon.errors import UnknownAgent, UsageError
from holon.home import registry
from holon.home.init import init_home
from holon.paths import agents_dir, registry_path
from holon.store.atomic import read_json


@pytest.mark.parametrize("ident", ["a", "A1", "my-agent", "x.y_z", "0", "a" * 64])
def test_valid_agent_ids(ident):
    assert registry.check_agent_id(ident) == ident


@pytest.mark.parametrize(
    "ident",
    [
        "",
        "-a",
        ".hidden",
        "_x",
        "a/b",
        "a b",
        "a" * 65,
        "é",
        "a\tb",
        "a\n",
    ],
)
def test_invalid_agent_ids(ident):
    with pytest.raises(UsageError) as err:
        registry.check_agent_id(ident)
    assert err.value.kind == "invalid_agent_id" and err.value.exit_code == 2


def test_register_and_unregister(tmp_path):
    registry.register("b", tmp_path / "b")
    registry.register("a", tmp_path / "a")
    data = read_json(registry_path())
    assert data["schema_version"] == 1
    assert list(data["agents"]) == ["a", "b"]  # sorted
    assert registry.load() == {"a": str(tmp_path / "a"), "b": str(tmp_path / "b")}
    registry.register("a", tmp_path / "moved")
    assert registry.load()["a"] == str(tmp_path / "moved")
    registry.unregister("a")
    registry.unregister("never-registered")
    assert registry.load() == {"b": str(tmp_path / "b")}


def test_unregister_without_registry_creates_nothing(holon_env):
    registry.unregister("a")
    assert not registry_path().exists()


def test_load_ignores_malformed_entries(holon_env):
    holon_env.mkdir(parents=True)
    registry_path().write_text('{"agents": {"ok": "/p", "bad": 3, "../x": "/q", "n": "a\\u0000"}}')
    assert registry.load() == {"ok": "/p"}


def test_a_registry_that_is_not_an_object_is_reported_not_ignored(holon_env):
    holon_env.mkdir(parents=True)
    registry_path().write_text("[]")
    with pytest.raises(UsageError) as err:
        registry.load()
    assert err.value.kind == "corrupt_registry" and "holon doctor --repair" in err.value.hint


def test_resolve_by_id_and_by_path(tmp_path, monkeypatch):
    home = init_home(str(tmp_path / "homes" / "x"), "x")
    assert registry.resolve("x").root == home.root
    assert registry.resolve("x").agent_id == "x"
    assert registry.resolve(str(home.root)).root == home.root
    assert registry.resolve(str(home.root)).agent_id == "x"  # read from agent.json
    monkeypatch.chdir(tmp_path / "homes")
    assert registry.resolve("./x").root == home.root
    monkeypatch.chdir(home.root)
    assert registry.resolve(".").root == home.root


def test_resolve_name_under_agents_dir_without_registry(agent):
    registry.unregister("a")
    assert registry.load() == {}
    assert registry.resolve("a").root == agents_dir() / "a"


def test_resolve_skips_a_stale_registry_entry(agent, tmp_path):
    registry.register("a", tmp_path / "not-a-home")
    assert registry.resolve("a").root == agent.root


def test_unknown_agent_error_with_hint(tmp_path):
    with pytest.raises(UnknownAgent) as err:
        registry.resolve("ghost")
    assert err.value.kind == "unknown_agent" and err.value.exit_code == 2
    assert "'ghost'" in err.value.message
    assert "holon agents" in err.value.hint and "holon init --agent-id ghost" in err.value.hint
    with pytest.raises(UnknownAgent) as err:
        registry.resolve(str(tmp_path / "no-home-here"))
    assert "--agent-id ID" in err.value.hint  # a path is no valid id to suggest


def test_all_homes_merges_registry_and_agents_dir(tmp_path):
    elsewhere = init_home(str(tmp_path / "elsewhere" / "z"), "z")  # registered, outside agents/
    init_home(None, "m")
    local = init_home(None, "b")
    registry.unregister("b")  # only found by scanning $HOLON_HOME/agents
    (agents_dir() / "not-a-home").mkdir()
    (agents_dir() / "file.txt").write_text("x")
    homes = registry.all_homes()
    assert [h.agent_id for h in homes] == ["b", "m", "z"]
    roots = {h.agent_id: h.root for h in homes}
    assert roots["z"] == elsewhere.root and roots["b"] == local.root
    assert len({os.fspath(h) for h in homes}) == 3  # m is registered and scanned, listed once


def test_all_homes_empty(holon_env):
    assert registry.all_homes() == []

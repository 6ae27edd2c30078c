"""holon.home.init: a home from a template, all or nothing, never over an existing home or id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.errors import AlreadyExists, UsageError
from holon.home import registry
from holon.home.init import BUILTIN_TEMPLATES, init_home
from holon.home.layout import is_home
from holon.paths import agents_dir
from holon.store.atomic import read_json


@pytest.fixture(autouse=True)
def no_user_templates(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


def _staging_leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".init-" in p.name] if parent.exists() else []


def test_init_from_builtin_template(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "1800000000")
    home = init_home(None, "a")
    assert home.root == agents_dir() / "a" and home.agent_id == "a"
    assert is_home(home)
    assert (home.root / "AGENTS.md").read_text() == (
        BUILTIN_TEMPLATES / "holon-default" / "AGENTS.md"
    ).read_text()
    assert (home.memory / "self.md").is_file() and (home.memory / "operator.md").is_file()
    for d in ("notes", "work", "skills"):
        assert (home.root / d).is_dir()
    assert not list(home.root.rglob(".keep"))
    ident = read_json(home.agent_json)
    assert ident["agent_id"] == "a" and ident["kind"] == "named" and ident["visibility"] == "public"
    assert ident["template"] == {"source": "builtin", "template_id": "holon-default"}
    assert ident["created_at"] == "2027-01-15T08:00:00.000Z"
    state = read_json(home.state_json)
    assert state["id"] == "a" and state["status"] == "awake_idle"
    assert registry.load() == {"a": str(home.root)}
    assert _staging_leftovers(home.root.parent) == []


def test_init_at_a_path_defaults_the_id_to_the_dir_name(tmp_path):
    home = init_home(str(tmp_path / "my-agent"), None)
    assert home.agent_id == "my-agent" and home.root == tmp_path / "my-agent"
    assert registry.resolve("my-agent").root == home.root


def test_init_into_an_empty_dir_is_allowed(tmp_path):
    target = tmp_path / "empty"
    target.mkdir()
    home = init_home(str(target), "e")
    assert is_home(home)


def test_refuses_a_non_empty_dir(tmp_path):
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(AlreadyExists) as err:
        init_home(str(target), "busy")
    assert err.value.exit_code == 2 and "not empty" in err.value.message
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    assert "busy" not in registry.load()


def test_refuses_a_file_as_target(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(AlreadyExists):
        init_home(str(target), "f")
    assert target.read_text() == "x"


def test_refuses_an_existing_agent_id(tmp_path):
    first = init_home(None, "a")
    with pytest.raises(AlreadyExists) as err:
        init_home(str(tmp_path / "elsewhere"), "a")
    assert err.value.kind == "already_exists" and "'a'" in err.value.message
    assert not (tmp_path / "elsewhere").exists()
    assert registry.load() == {"a": str(first.root)}


def test_a_stale_registry_entry_does_not_block_the_id(tmp_path):
    registry.register("a", tmp_path / "gone")
    home = init_home(str(tmp_path / "new"), "a")
    assert registry.load() == {"a": str(home.root)}


def test_unknown_template_error_with_hint():
    with pytest.raises(UsageError) as err:
        init_home(None, "a", template="nope")
    assert err.value.kind == "unknown_template"
    assert "holon-default" in err.value.hint
    assert not (agents_dir() / "a").exists() and registry.load() == {}


def test_remote_template_is_refused():
    with pytest.raises(UsageError) as err:
        init_home(None, "a", template="https://example.com/t.git")
    assert err.value.kind == "unsupported_template_source"


def test_local_template_without_agents_md_is_refused(tmp_path):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "README.md").write_text("no agents file")
    with pytest.raises(UsageError) as err:
        init_home(None, "a", template=str(tpl))
    assert err.value.kind == "invalid_template" and "AGENTS.md" in err.value.hint
    assert not (agents_dir() / "a").exists()


def test_local_template_is_copied_with_provenance(tmp_path):
    tpl = tmp_path / "tpl"
    (tpl / "memory").mkdir(parents=True)
    (tpl / "AGENTS.md").write_text("# Local agent\n")
    (tpl / "memory" / "self.md").write_text("# I am local\n")
    (tpl / "skills.json").write_text("{}")  # template metadata, not copied
    home = init_home(None, "loc", template=str(tpl))
    assert home.agents_md.read_text() == "# Local agent\n"
    assert (home.memory / "self.md").read_text() == "# I am local\n"
    assert (home.memory / "operator.md").read_text() == "# Operator\n"
    assert not (home.root / "skills.json").exists()
    assert read_json(home.agent_json)["template"] == {"source": "local", "path": str(tpl)}


def test_user_template_from_home_dir(tmp_path):
    tpl = tmp_path / "user" / ".agents" / "templates" / "mine"
    tpl.mkdir(parents=True)
    (tpl / "AGENTS.md").write_text("# Mine\n")
    home = init_home(None, "u", template="mine")
    assert home.agents_md.read_text() == "# Mine\n"
    assert read_json(home.agent_json)["template"]["source"] == "user"


def test_failure_leaves_no_staging_and_no_home(tmp_path):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "AGENTS.md").write_text("# Broken\n")
    (tpl / "memory").write_text("a file where the home needs a directory")
    target = tmp_path / "homes" / "b"
    with pytest.raises(OSError):
        init_home(str(target), "b", template=str(tpl))
    assert not target.exists()
    assert _staging_leftovers(target.parent) == []
    assert "b" not in registry.load()


def test_failure_into_an_empty_dir_keeps_the_dir(tmp_path):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "AGENTS.md").write_text("# Broken\n")
    (tpl / "work").write_text("not a dir")
    target = tmp_path / "homes" / "b"
    target.mkdir(parents=True)
    with pytest.raises(OSError):
        init_home(str(target), "b", template=str(tpl))
    assert target.is_dir() and list(target.iterdir()) == []
    assert _staging_leftovers(target.parent) == []


def test_invalid_agent_id_is_refused():
    with pytest.raises(UsageError) as err:
        init_home(None, "bad/id")
    assert err.value.kind == "invalid_agent_id"


def test_cli_init_twice():
    from scenario_helpers import cli

    code, out, err = cli("init", "--agent-id", "a")
    assert code == 0, err
    code, _, err = cli("init", "--agent-id", "a")
    assert code == 2 and "already_exists" in err
    ident = json.loads((agents_dir() / "a" / ".holon" / "agent.json").read_text())
    assert ident["agent_id"] == "a"

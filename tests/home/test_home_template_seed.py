"""holon.home.template_seed and the built-in templates and skills (spec, Agent Initialization
Contract: built-in templates are seeded into ~/.agents/templates under Holon-prefixed ids such
as holon-default and holon-developer; a locally diverged copy is not overwritten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenario_helpers import cli

from holon.home import template_seed
from holon.home.init import resolve_template


@pytest.fixture
def user(tmp_path, monkeypatch):
    home = tmp_path / "user"
    monkeypatch.setenv("HOME", str(home))
    return home / ".agents" / "templates"


def test_init_seeds_the_builtin_templates_and_keeps_local_edits(user):
    """Seeded on init, refreshed while unmodified, never overwritten once edited."""
    rc, _, err = cli("init", "--agent-id", "a")
    assert rc == 0, err
    assert {"holon-default", "holon-developer"} <= {p.name for p in user.iterdir()}
    developer = user / "holon-developer"
    assert (developer / "AGENTS.md").is_file() and (developer / "skills.json").is_file()
    assert template_seed.unmodified(developer)
    # an older holon's copy, still as holon wrote it: refreshed
    (developer / "AGENTS.md").write_text("old\n")
    mark = developer / template_seed.MARK
    mark.write_text(json.dumps({"schema_version": 1, "digest": template_seed.digest(developer)}))
    assert template_seed.seed() == ["holon-developer"]
    assert "software developer" in (developer / "AGENTS.md").read_text()
    # the operator's edit: kept, and it is what the id resolves to
    (developer / "AGENTS.md").write_text("# my developer\n")
    assert template_seed.seed() == []
    assert (developer / "AGENTS.md").read_text() == "# my developer\n"
    path, provenance = resolve_template("holon-developer")
    assert path == developer and provenance["source"] == "user"
    assert resolve_template("holon-default")[1]["source"] == "builtin"  # unmodified copy


def test_developer_template_installs_the_builtin_skills(user):
    """A new agent from holon-developer gets holon's built-in skills under skills/, and the
    seeding mark never reaches the home."""
    rc, out, err = cli("init", "--agent-id", "dev", "--template", "holon-developer", "--json")
    assert rc == 0, err
    root = json.loads(out)["home"]
    rc, out, err = cli("skills", "list", "dev", "--json")
    assert rc == 0, err
    found = {s["name"]: s for s in json.loads(out)["skills"]}
    assert {"git-change", "background-tasks", "delegate-work"} <= set(found)
    assert all(found[n]["scope"] == "agent" for n in ("git-change", "delegate-work"))
    assert "software developer" in (Path(root) / "AGENTS.md").read_text()
    assert not list(Path(root).rglob(template_seed.MARK))

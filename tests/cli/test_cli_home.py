"""`holon init`, `holon agents`, agent resolution and the error line format,
through the real entry point."""

from __future__ import annotations

import json
import os

from helpers import run


def test_init_creates_the_default_layout(holon_env):
    r = run("init", "--agent-id", "alpha")
    assert r.returncode == 0, r.stderr
    root = holon_env / "agents" / "alpha"
    for rel in (
        "AGENTS.md",
        "memory/self.md",
        "memory/operator.md",
        "notes",
        "work",
        "skills",
        ".holon/agent.json",
        ".holon/state.json",
        ".holon/queue/new",
        ".holon/queue/cur",
        ".holon/queue/tmp",
        ".holon/ledger",
        ".holon/locks",
        ".holon/.gitignore",
    ):
        assert (root / rel).exists(), rel
    ident = json.loads((root / ".holon/agent.json").read_text())
    assert ident["agent_id"] == "alpha" and ident["schema_version"] == 1
    assert ident["template"] == {"source": "builtin", "template_id": "holon-default"}
    gitignore = (root / ".holon/.gitignore").read_text()
    assert "locks/" in gitignore and "/queue/" in gitignore and "indexes/" in gitignore


def test_init_at_path_registers_and_resolves_by_id_and_path(tmp_path):
    target = tmp_path / "homes" / "beta"
    assert run("init", str(target)).returncode == 0
    ids = [a["agent_id"] for a in json.loads(run("agents", "--json").stdout)]
    assert ids == ["beta"]
    assert run("status", "beta", "--json").returncode == 0
    assert json.loads(run("status", str(target), "--json").stdout)["agent_id"] == "beta"


def test_init_never_overwrites(tmp_path):
    target = tmp_path / "gamma"
    assert run("init", str(target)).returncode == 0
    (target / "AGENTS.md").write_text("mine")
    r = run("init", str(target), "--agent-id", "other")
    assert r.returncode == 2
    assert r.stderr.startswith("holon: already_exists: ")
    assert "hint: " in r.stderr
    assert (target / "AGENTS.md").read_text() == "mine"
    again = run("init", "--agent-id", "gamma")
    assert again.returncode == 2 and "already exists" in again.stderr


def test_init_from_local_template_and_bad_templates(tmp_path):
    tpl = tmp_path / "tpl"
    (tpl / "skills" / "greet").mkdir(parents=True)
    (tpl / "AGENTS.md").write_text("# custom\n")
    (tpl / "skills" / "greet" / "SKILL.md").write_text("say hi\n")
    assert run("init", str(tmp_path / "h1"), "--template", str(tpl)).returncode == 0
    assert (tmp_path / "h1" / "AGENTS.md").read_text() == "# custom\n"
    assert (tmp_path / "h1" / "skills" / "greet" / "SKILL.md").exists()
    empty = tmp_path / "empty-tpl"
    empty.mkdir()
    r = run("init", str(tmp_path / "h2"), "--template", str(empty))
    assert r.returncode == 2 and "invalid_template" in r.stderr
    assert not (tmp_path / "h2").exists()
    assert not [p for p in tmp_path.iterdir() if ".init-" in p.name]  # nothing half-made
    r = run("init", str(tmp_path / "h3"), "--template", "no-such-template")
    assert r.returncode == 2 and "unknown_template" in r.stderr and "holon-default" in r.stderr


def test_half_made_home_is_removed(tmp_path, monkeypatch):
    import pytest

    import holon.home.init as init_mod

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(init_mod, "write_json", boom)
    target = tmp_path / "delta"
    with pytest.raises(OSError):
        init_mod.init_home(str(target), None)
    assert not target.exists()
    assert (
        os.listdir(tmp_path) == ["holon-home"] or os.listdir(tmp_path) == []
    )  # no staging leftovers
    assert "delta" not in init_mod.registry.load()


def test_unknown_agent_is_a_usage_error():
    r = run("status", "nobody")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == "holon: unknown_agent: no agent 'nobody'"
    assert r.stderr.splitlines()[1].startswith("hint: ")


def test_invalid_agent_id():
    r = run("init", "--agent-id", "../evil")
    assert r.returncode == 2 and "invalid_agent_id" in r.stderr

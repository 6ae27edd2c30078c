"""holon.home.skills: discovery by scope and role, the first existing root of a scope, front
matter, bounds and symlinks."""

from __future__ import annotations

import os

import pytest

from holon.home import skills
from holon.home.init import init_home


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A HOME of its own: Path.home() follows $HOME."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def make(root, name, text=None):
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    body = f"---\nname: {name}\ndescription: {name} skill\n---\n# {name}\n"
    (d / "SKILL.md").write_text(body if text is None else text)
    return d / "SKILL.md"


def test_path_home_honours_HOME(user):
    from pathlib import Path

    assert Path.home() == user


def test_scopes_and_precedence_for_the_default_agent(user, tmp_path):
    home = init_home(None, "main", kind="default")
    ws = tmp_path / "ws"
    make(user / ".agents" / "skills", "shared")
    make(user / ".agents" / "skills", "mine")
    make(home.skills, "shared")
    make(home.skills, "agentonly")
    make(ws / ".claude" / "skills", "shared")
    found = {s.name: s for s in skills.discover(home, ws)}
    assert sorted(found) == ["agentonly", "mine", "shared"]
    assert found["mine"].scope == "user"
    assert found["agentonly"].scope == "agent"
    # the same name in two scopes: workspace over agent over user
    assert found["shared"].scope == "workspace"
    assert found["shared"].path == str(ws / ".claude" / "skills" / "shared" / "SKILL.md")
    assert [s.scope for s in skills.discover(home)] == ["agent", "user", "agent"]


def test_named_and_child_agents_do_not_see_user_skills(user):
    make(user / ".agents" / "skills", "mine")
    for kind in ("named", "child"):
        home = init_home(None, kind, kind=kind)
        make(home.skills, "own")
        assert [s.name for s in skills.discover(home)] == ["own"]


def test_only_the_first_existing_root_of_a_scope(user, tmp_path):
    home = init_home(None, "main", kind="default")
    (user / ".codex" / "skills").mkdir(parents=True)  # exists, empty: it wins over .claude
    make(user / ".claude" / "skills", "claude-only")
    make(home.root / ".agents" / "skills", "hidden-by-skills-dir")  # home/skills exists
    ws = tmp_path / "ws"
    make(ws / ".agents" / "skills", "a")
    make(ws / ".codex" / "skills", "b")
    assert [s.name for s in skills.discover(home, ws)] == ["a"]
    home.skills.rmdir()
    assert [s.name for s in skills.discover(home, ws)] == ["a", "hidden-by-skills-dir"]


def test_the_home_as_workspace_is_no_workspace_scope(tmp_path):
    home = init_home(None, "a")
    make(home.root / ".agents" / "skills", "x")
    found = skills.discover(home, home.root)
    # home/skills exists (empty): the agent scope is that root; .agents/skills is not a workspace
    assert found == []


def test_front_matter_rules(agent):
    make(agent.skills, "ok", '---\nname: ok\ndescription: "Deploy: safely"\nlicense: MIT\n---\n')
    make(agent.skills, "single", "---\ndescription: 'it''s'\nmetadata:\n  a: b\n---\nbody")
    make(agent.skills, "none", "# no front matter\n")
    make(agent.skills, "open", "---\ndescription: never closed\n")
    make(agent.skills, "multi", "---\ndescription: >\n  folded\n---\n")
    make(agent.skills, "junk", "---\nthis is not yaml\n---\n")
    make(agent.skills, "other", "---\nname: different\ndescription: d\n---\n")
    found = {s.name: s for s in skills.discover(agent)}
    assert found["ok"].description == "Deploy: safely" and found["ok"].problem is None
    assert found["single"].description == "it's"
    assert found["none"].description == "" and "no front matter" in found["none"].problem
    assert "not closed" in found["open"].problem
    assert "one-line" in found["multi"].problem and found["multi"].description == ""
    assert "line 2" in found["junk"].problem
    assert found["other"].description == "d" and "'different'" in found["other"].problem


def test_bounds_hidden_dirs_and_sanitised_text(agent, monkeypatch):
    monkeypatch.setattr(skills, "MAX_PER_ROOT", 3)
    for n in ("d", "c", "b", "a"):
        make(agent.skills, n)
    make(agent.skills, ".hidden")
    (agent.skills / "no-skill-md").mkdir()
    (agent.skills / "file.txt").write_text("x")
    make(agent.skills, "long", "---\ndescription: " + "x" * 1000 + "\n---\n")
    names = [s.name for s in skills.discover(agent)]
    assert names == ["a", "b", "c"]  # by name, at most MAX_PER_ROOT
    monkeypatch.setattr(skills, "MAX_PER_ROOT", 64)
    long = {s.name: s for s in skills.discover(agent)}["long"]
    assert len(long.description) == skills.MAX_DESCRIPTION
    make(agent.skills, "evil\nname", "---\ndescription: a\x1b[31mred\u202e\n---\n")
    evil = {s.name: s for s in skills.discover(agent)}["evil\nname"]
    assert evil.label == "evil\\u000aname"
    assert "\x1b" not in evil.description and "\u202e" not in evil.description


def test_symlinks_leading_out_of_a_root_are_not_followed(agent, tmp_path):
    outside = tmp_path / "outside"
    make(outside, "leak")
    os.symlink(outside / "leak", agent.skills / "leak")
    make(agent.skills, "real")
    os.symlink(agent.skills / "real", agent.skills / "alias")  # inside the root: kept
    (agent.skills / "linked-md").mkdir()
    os.symlink(outside / "leak" / "SKILL.md", agent.skills / "linked-md" / "SKILL.md")
    (agent.skills / "fifo").mkdir()
    os.mkfifo(agent.skills / "fifo" / "SKILL.md")  # never opened for a blocking read
    assert [s.name for s in skills.discover(agent)] == ["alias", "real"]
    refused: list = []
    skills.discover(agent, refused=refused)
    assert {(os.path.relpath(r.path, agent.skills), r.reason) for r in refused} == {
        ("leak/SKILL.md", "symlink_escape"),
        ("linked-md/SKILL.md", "symlink_escape"),
        ("fifo/SKILL.md", "not_regular"),
    }


def test_a_catalog_that_is_a_symlink_out_of_its_base_is_refused(agent, tmp_path):
    outside = tmp_path / "outside"
    make(outside, "leak")
    os.rmdir(agent.skills)
    os.symlink(outside, agent.skills)  # the whole catalog points away from the home
    refused: list = []
    assert skills.discover(agent, refused=refused) == []
    assert [(r.path, r.reason) for r in refused] == [(str(agent.skills), "symlink_escape")]

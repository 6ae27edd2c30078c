"""`holon skills list AGENT [--json]`: name, scope, active state, description and path, through the
real entry point."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok
from scenario_helpers import cli

from holon.agent.handle import Agent
from holon.cli.skills import skills_group


@pytest.fixture(autouse=True)
def user(tmp_path, monkeypatch):
    home = tmp_path / "user"
    monkeypatch.setenv("HOME", str(home))
    return home


def make(root, name, front="---\ndescription: Does {name}.\n---\n"):
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(front.format(name=name))


def test_list_plain_and_json(agent, user):
    make(agent.skills, "deploy")
    make(agent.skills, "bare", "no front matter")
    make(user / ".agents" / "skills", "personal")  # not for a named agent
    path = str(agent.skills / "deploy" / "SKILL.md")
    Agent(agent).update_state(
        lambda s: s.active_skills.update(
            deploy={"state": "session_active", "scope": "agent", "path": path, "activated_at": "t"}
        )
    )
    code, out, err = cli("skills", "list", "a")
    assert code == 0, err
    assert out.splitlines() == [
        "bare  [agent]  inactive  -",
        f"    {agent.skills / 'bare' / 'SKILL.md'}",
        "    problem: no front matter (a first line ---)",
        "deploy  [agent]  session_active  Does deploy.",
        f"    {path}",
    ]
    code, out, _ = cli("skills", "list", "a", "--json")
    doc = json.loads(out)
    assert [s["name"] for s in doc["skills"]] == ["bare", "deploy"]
    deploy = doc["skills"][1]
    assert deploy == {
        "name": "deploy",
        "scope": "agent",
        "description": "Does deploy.",
        "path": path,
        "root": str(agent.skills),
        "problem": None,
        "active": "session_active",
        "activated_at": "t",
    }


def test_default_agent_sees_user_skills_and_empty_list(user):
    assert cli("init", "--agent-id", "main")[0] == 0
    code, out, err = cli("skills", "list", "main")
    assert code == 0 and out == "" and err == "no skills\n"
    make(user / ".claude" / "skills", "personal")
    from holon.home.registry import resolve

    home = resolve("main")
    home_ident = json.loads(home.agent_json.read_text())
    home_ident["kind"] = "default"
    home.agent_json.write_text(json.dumps(home_ident))
    doc = json.loads(cli("skills", "list", "main", "--json")[1])
    assert [(s["name"], s["scope"]) for s in doc["skills"]] == [("personal", "user")]


def test_unknown_agent_is_a_clear_error():
    fails("skills", "list", "nobody", code=2, kind="unknown_agent")


def test_help():
    code, out, _ = cli("skills", "list", "--help")
    assert code == 0 and "session_active" in out
    assert "first existing" in ok(skills_group, "--help").stdout


def test_the_default_agent_alone_sees_the_users_skills(user):
    """A bare `holon init` makes the default agent (`main`, kind default); a named agent does not
    see ~/.agents/skills."""
    from helpers import holon

    make(user / ".agents" / "skills", "personal")
    holon("init")
    holon("init", "--agent-id", "other")
    mine = json.loads(holon("skills", "list", "main", "--json").stdout)["skills"]
    assert [(s["name"], s["scope"]) for s in mine] == [("personal", "user")]
    assert json.loads(holon("skills", "list", "other", "--json").stdout)["skills"] == []
    status = json.loads(holon("status", "main", "--json").stdout)
    assert status["identity"]["kind"] == "default"

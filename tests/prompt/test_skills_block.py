"""holon.prompt.skills: the skills block lists name, scope, description and SKILL.md path (never
the body), the active skills as metadata, and stays the same while nothing changes."""

from __future__ import annotations

import pytest
from golden_check import check_golden, normalize

from holon.agent.handle import Agent
from holon.prompt import assemble
from holon.prompt import skills as block


@pytest.fixture(autouse=True)
def user(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


def make(root, name, description):
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nSECRET-BODY {name}\n"
    )


def _skills_block(home, ws=None):
    blocks = assemble.system_blocks(home, tool_guidance=["T"], workspace_root=ws)
    return [b for b in blocks if b.name == "skills"]


def test_block_lists_catalog_metadata_only(agent, tmp_path):
    make(agent.skills, "deploy", "Deploy the service safely.")
    make(agent.skills, "audit", "Audit dependencies.")
    (agent.skills / "bare").mkdir()
    (agent.skills / "bare" / "SKILL.md").write_text("no front matter")
    ws = tmp_path / "ws"
    make(ws / ".agents" / "skills", "lint", "Run the repo's linters.")
    (b,) = _skills_block(agent, ws)
    assert "SECRET-BODY" not in b.text
    assert str(agent.skills / "deploy" / "SKILL.md") in b.text
    check_golden("prompts/skills_block.txt", normalize(b.text, tmp_path))


def test_no_skills_no_block(agent):
    assert _skills_block(agent) == []
    assert block.block(agent) is None


def test_block_is_stable_and_shows_active_skills(agent):
    make(agent.skills, "deploy", "Deploy.")
    first = assemble.build_frame(agent, tool_guidance=["T"]).cache.prompt_cache_key
    assert assemble.build_frame(agent, tool_guidance=["T"]).cache.prompt_cache_key == first
    Agent(agent).update_state(
        lambda s: s.active_skills.update(
            deploy={
                "state": "session_active",
                "scope": "agent",
                "path": str(agent.skills / "deploy" / "SKILL.md"),
                "activated_at": "2027-01-01T00:00:00Z",
            },
            gone={"state": "session_active", "path": "/nowhere/SKILL.md"},
        )
    )
    (b,) = _skills_block(agent)
    assert b.text.splitlines()[-1] == "Active skills: deploy (session_active)"
    assert assemble.build_frame(agent, tool_guidance=["T"]).cache.prompt_cache_key != first


def test_unreadable_state_shows_no_active_skills(agent):
    make(agent.skills, "deploy", "Deploy.")
    agent.state_json.write_text("{not json")
    assert block.active_skills(agent) == {}
    assert "Active skills" not in block.block(agent)

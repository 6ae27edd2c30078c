"""holon.runtime.turn.skills: a command that reads a skill's SKILL.md (or runs one of its scripts)
activates it through a real scripted turn: skill_activated, turn_active during the turn,
session_active after it settles, shown active in the next turn's prompt."""

from __future__ import annotations

from scenario_helpers import cli

from holon.agent.handle import Agent
from holon.providers import runner
from holon.runtime.turn import skills as activation
from holon.runtime.turn.context import build_request
from holon.store import jsonl


def make(root, name):
    d = root / name
    (d / "scripts").mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\nsteps\n")
    (d / "scripts" / "run.sh").write_text("echo ran\n")
    return d


def exec_round(cmd, text="reading"):
    return {"text": text, "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": cmd}}]}


def activations(home):
    return [e["data"] for e in jsonl.read(home.events) if e["kind"] == "skill_activated"]


def skills_text(request):
    return next(b.text for b in request.frame.system_blocks if b.name == "skills")


def test_reading_skill_md_activates_it_for_the_session(agent, script, monkeypatch):
    make(agent.skills, "deploy")
    make(agent.skills, "audit")
    sent = []
    real = runner.run_round
    monkeypatch.setattr(
        runner, "run_round", lambda req, *a, **kw: sent.append(req) or real(req, *a, **kw)
    )
    model = script(exec_round("cat skills/deploy/SKILL.md"), {"text": "done"})
    code, out, err = cli("prompt", "a", "deploy it", "--model", model)
    assert code == 0, err
    skill_md = str(agent.skills / "deploy" / "SKILL.md")
    (event,) = activations(agent)
    assert {k: v for k, v in event.items() if k != "turn_id"} == {
        "skill": "deploy",
        "scope": "agent",
        "path": skill_md,
        "entrypoint_path": skill_md,
        "load_reason": "read_skill_md",
    }
    # the round after the read saw it turn_active; the turn's settle made it session_active
    assert "Active skills" not in skills_text(sent[0])
    assert skills_text(sent[1]).endswith("Active skills: deploy (turn_active)")
    state = Agent(agent).state()
    assert state.active_skills["deploy"]["state"] == "session_active"
    assert state.active_skills["deploy"]["path"] == skill_md
    nxt = build_request(Agent(agent), model).request
    assert skills_text(nxt).endswith("Active skills: deploy (session_active)")
    # reading an active skill again emits nothing
    again = script(exec_round(f"head -n 3 {skill_md}"), {"text": "ok"}, name="again.jsonl")
    assert cli("prompt", "a", "again", "--model", again)[0] == 0
    assert len(activations(agent)) == 1


def test_running_a_skill_script_in_a_batch_activates_it(agent, script):
    make(agent.skills, "deploy")
    batch = {
        "text": "running",
        "tool_calls": [
            {
                "name": "ExecCommandBatch",
                "arguments": {
                    "commands": [
                        {"cmd": "true"},
                        {"cmd": "sh scripts/run.sh", "workdir": "skills/deploy"},
                    ]
                },
            }
        ],
    }
    code, _, err = cli("prompt", "a", "go", "--model", script(batch, {"text": "done"}))
    assert code == 0, err
    (event,) = activations(agent)
    assert event["load_reason"] == "run_skill_script"
    assert event["path"] == str(agent.skills / "deploy" / "scripts" / "run.sh")
    assert event["entrypoint_path"] == str(agent.skills / "deploy" / "SKILL.md")


def test_failed_commands_and_unknown_paths_activate_nothing(agent, script):
    make(agent.skills, "deploy")
    model = script(
        exec_round("cat skills/deploy/SKILL.md && false"),
        exec_round("cat skills/nosuch/SKILL.md || true"),
        exec_round("echo SKILL.md"),
        {"text": "done"},
    )
    assert cli("prompt", "a", "go", "--model", model)[0] == 0
    assert activations(agent) == [] and Agent(agent).state().active_skills == {}


def test_a_failed_turn_drops_what_it_activated(agent, script):
    make(agent.skills, "deploy")
    model = script(exec_round("cat skills/deploy/SKILL.md"))  # then the script is exhausted
    assert cli("prompt", "a", "go", "--model", model)[0] == 1
    assert len(activations(agent)) == 1
    assert Agent(agent).state().active_skills == {}


def test_matching_and_bounds(agent, tmp_path):
    from holon.home import skills

    make(agent.skills, "deploy")
    catalog = skills.discover(agent)
    md = str(agent.skills / "deploy" / "SKILL.md")
    for cmd, base in (
        (f"sed -n 1,40p '{md}'", tmp_path),
        ("cat ./SKILL.md", agent.skills / "deploy"),
        ("less skills/deploy/../deploy/SKILL.md", agent.root),
    ):
        assert [(s.name, r) for s, r, _ in activation.matches(catalog, cmd, [base])] == [
            ("deploy", "read_skill_md")
        ], cmd
    assert activation.matches(catalog, "cat skills/deploy/SKILL.md.bak", [agent.root]) == []
    active = {f"s{i}": {"activated_at": f"2027-01-01T00:00:{i:02d}Z"} for i in range(40)}
    activation.bound(active)
    assert len(active) == activation.MAX_ACTIVE and "s0" not in active and "s39" in active

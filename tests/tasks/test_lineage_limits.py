"""Every agent a lineage creates is bound by its root, through real scripted turns: a private
child or a grandchild at the maximum depth cannot found a public agent; public agents count
against their creator's live children and depth; a public agent cannot run on fresh budget when
its creator's daily budget is spent (holon.agent.lineage)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import holon, init_agent, transcript, write_script


def spawn(**arguments) -> dict:
    return {"name": "SpawnAgent", "arguments": arguments}


def public(agent_id: str, **more) -> dict:
    return spawn(preset="public_named", agent_id=agent_id, **more)


def registry() -> dict:
    """id -> absolute home path (registry.json stores homes in $HOLON_HOME relative to it)."""
    base = Path(os.environ["HOLON_HOME"])
    stored = json.loads((base / "registry.json").read_text())["agents"]
    return {k: str(base / v) for k, v in stored.items()}


def tool_errors(home: Path) -> list[str | None]:
    """The error kind (None on success) of each SpawnAgent result in the agent's transcript."""
    out = []
    for entry in transcript(home):
        data = entry.get("data") or {}
        if entry["kind"] == "tool_result" and data.get("tool_name", "SpawnAgent") == "SpawnAgent":
            envelope = data.get("envelope") or data
            out.append(((envelope.get("error") or {}) or {}).get("kind"))
    return out


def children_of(home: Path) -> list[dict]:
    out = []
    for d in sorted((home / ".holon" / "tasks").iterdir()):
        rec = json.loads((d / "task.json").read_text())
        if rec["kind"] == "child_agent_task":
            out.append(rec)
    return out


def model(tmp_path: Path, name: str, *rounds: dict) -> None:
    holon("model", "set", name, write_script(tmp_path / f"{name}.jsonl", list(rounds)))


def test_a_private_child_and_a_max_depth_grandchild_cannot_found_public_agents(tmp_path):
    parent = init_agent("p")
    model(tmp_path, "p", {"tool_calls": [spawn(initial_message="delegate")]}, {"text": "ok"})
    holon("prompt", "p", "go")
    (rec,) = children_of(parent)
    child_id, child = rec["child_agent_id"], Path(rec["child_home"])
    model(
        tmp_path,
        child_id,
        {"tool_calls": [public("from-child", initial_message="hi"), spawn(initial_message="g")]},
        {"text": "child done"},
    )
    holon("tick", "--all", check=False)
    assert "from-child" not in registry()
    assert not (Path(os.environ["HOLON_HOME"]) / "agents" / "from-child").exists()
    assert tool_errors(child) == ["public_spawn_refused", None]
    (grec,) = children_of(child)
    grandchild = Path(grec["child_home"])
    model(
        tmp_path,
        grec["child_agent_id"],
        {"tool_calls": [public("from-grandchild"), spawn(initial_message="deeper")]},
        {"text": "grandchild done"},
    )
    holon("tick", "--all", check=False)
    assert "from-grandchild" not in registry()
    assert tool_errors(grandchild) == ["public_spawn_refused", "delegation_depth_exceeded"]
    refusal = next(
        e["data"] for e in transcript(grandchild) if e["kind"] == "tool_result"
    )  # a tool error envelope the model reads, with a hint; the turn went on
    text = json.dumps(refusal)
    assert "supervised by its parent" in text and "private_child" in text


def test_live_children_count_both_presets_and_public_agents_inherit_the_depth(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HOLON_DELEGATION_MAX_LIVE_CHILDREN", "3")
    parent = init_agent("p")
    calls = [
        spawn(initial_message="one"),
        public("pub-1"),
        spawn(initial_message="two"),
        public("pub-2"),
        spawn(initial_message="three"),
        public("pub-3"),
    ]
    model(tmp_path, "p", {"tool_calls": calls}, {"text": "ok"})
    holon("prompt", "p", "go")
    assert tool_errors(parent) == [None] * 3 + ["too_many_children"] * 3
    assert len(children_of(parent)) == 2
    assert "pub-1" in registry() and not {"pub-2", "pub-3"} & set(registry())
    status = json.loads(holon("status", "pub-1", "--json").stdout)["identity"]
    assert status["lineage_parent_agent_id"] == "p" and status["lineage_root_agent_id"] == "p"
    assert status["lineage_depth"] == 1 and status["ownership"] == "self_owned"
    # a public agent sits one level below its creator: at max_depth 1 it creates nothing
    monkeypatch.setenv("HOLON_DELEGATION_MAX_DEPTH", "1")
    pub = Path(registry()["pub-1"])
    model(
        tmp_path,
        "pub-1",
        {"tool_calls": [public("pub-1a"), spawn(initial_message="x")]},
        {"text": "ok"},
    )
    holon("prompt", "pub-1", "go")
    assert tool_errors(pub) == ["delegation_depth_exceeded", "delegation_depth_exceeded"]
    assert "pub-1a" not in registry()


def test_a_public_agent_cannot_run_on_fresh_budget_when_its_creator_is_spent(tmp_path):
    init_agent("p")
    holon("model", "budget", "p", "--daily-tokens", "50")
    model(
        tmp_path,
        "p",
        {
            "tool_calls": [public("pub", initial_message="spend for me")],
            "usage": {"input_tokens": 60, "output_tokens": 0},
        },
        {"text": "never reached"},
    )
    holon("prompt", "p", "go", check=False)  # the root spends its whole day spawning
    pub = Path(registry()["pub"])
    model(tmp_path, "pub", {"text": "ran on fresh budget"})
    holon("tick", "pub", check=False)
    briefs = pub / ".holon" / "ledger" / "briefs.jsonl"
    assert "ran on fresh budget" not in (briefs.read_text() if briefs.exists() else "")
    # its message waits, unconsumed, on its creator's spent day (nothing is dropped)
    events = [json.loads(x) for x in holon("events", "pub", "--jsonl").stdout.splitlines()]
    (held,) = [e["data"] for e in events if e["kind"] == "queue_held"]
    assert held["agent_id"] == "p" and held["budget"] == "daily_tokens", held
    assert list((pub / ".holon" / "queue" / "new").iterdir())


def test_tokens_a_public_agent_spends_count_against_its_creator(tmp_path):
    init_agent("p")
    holon("model", "budget", "p", "--daily-tokens", "100")
    model(tmp_path, "p", {"tool_calls": [public("pub")]}, {"text": "ok"}, {"text": "p again"})
    holon("prompt", "p", "go")
    model(tmp_path, "pub", {"text": "spent", "usage": {"input_tokens": 120, "output_tokens": 0}})
    holon("prompt", "pub", "go", check=False)
    r = holon("prompt", "p", "again", check=False)
    assert r.returncode != 0 and "daily token budget" in r.stderr


def test_holon_tool_call_is_held_to_the_same_limits(tmp_path, monkeypatch):
    def tool(agent: str, args: dict) -> dict:
        proc = holon("tool", "call", agent, "SpawnAgent", "--input", json.dumps(args), check=False)
        return json.loads(proc.stdout)

    init_agent("p")
    monkeypatch.setenv("HOLON_DELEGATION_MAX_LIVE_CHILDREN", "1")
    child = tool("p", {"initial_message": "one"})["result"]["child_agent_id"]
    refused = tool(child, {"preset": "public_named", "agent_id": "x"})
    assert refused["error"]["kind"] == "public_spawn_refused"
    assert refused["error"]["recovery_hint"]
    full = tool("p", {"preset": "public_named", "agent_id": "y"})
    assert full["error"]["kind"] == "too_many_children"
    assert not {"x", "y"} & set(registry())


def test_a_template_path_is_refused_to_the_model(tmp_path):
    """A path would copy any directory with an AGENTS.md (another agent's home, with its
    admission key) into a home the new agent reads."""
    init_agent("p")
    other = init_agent("other")
    for template in (str(other), "../other", ".."):
        for preset in ({"initial_message": "x"}, {"preset": "public_named", "agent_id": "z"}):
            args = json.dumps({**preset, "template": template})
            proc = holon("tool", "call", "p", "SpawnAgent", "--input", args, check=False)
            assert json.loads(proc.stdout)["error"]["kind"] == "invalid_tool_input", template
    assert "z" not in registry() and not (Path(registry()["p"]) / ".holon" / "children").exists()

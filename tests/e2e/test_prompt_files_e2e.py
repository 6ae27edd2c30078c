"""Files the runtime reads from places an agent can write are read beneath their root
(holon.confined), through real turns: AGENTS.md, memory files, a workspace's AGENTS.md, skills,
a plan and the memory index's files planted as symlinks to keys.json or /proc/self/environ,
FIFOs, /dev/zero, huge files and directories never reach a request, `holon debug prompt`, a
ledger or the memory index; no tick hangs or crashes; each refused file is named in the manifest
and `holon doctor`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from gitrepo import make_repo
from helpers import init_agent, run, subprocess_env, transcript, write_script
from scenario_helpers import cli

from holon.agent import workitems
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.providers import runner
from holon.store import jsonl

SECRET = "sk-proj-PLANTED-0123456789abcdef"
ENV_SECRET = "sk-env-ONLY-IN-THE-TICK-9876543210"


def call(name: str, i: int, **args) -> dict:
    return {"text": name, "tool_calls": [{"id": f"c{i}", "name": name, "arguments": args}]}


def every_byte(root: Path) -> bytes:
    """Every regular file under `root` (ledgers, the memory index, artifacts ...), concatenated."""
    out = []
    for top, _dirs, names in os.walk(root):
        for name in names:
            p = Path(top, name)
            if p.is_file() and not p.is_symlink():
                out.append(p.read_bytes())
    return b"\n".join(out)


def open_item_with_plan(home: Path) -> Path:
    rec = workitems.new_record("a", "ship it")
    jsonl.append(Home(home).work_items, rec)
    plan = Home(home).plan_path(rec["id"])
    plan.parent.mkdir(parents=True)
    return plan


def plant(link: Path, target: str | Path) -> None:
    """`link` (a file holon made, or a new one) replaced by a symlink to `target`."""
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def refused_paths(manifest: dict) -> dict[str, str]:
    return {r["path"]: r["reason"] for r in manifest["refused_files"]}


def test_symlinks_to_the_keys_file_never_reach_a_request(holon_env, tmp_path, monkeypatch):
    assert cli("keys", "set", "OPENAI_API_KEY", "-", stdin=SECRET)[0] == 0
    keys_json = holon_env / "keys.json"
    home = init_agent("a")
    plant(home / "AGENTS.md", keys_json)
    plant(home / "memory" / "self.md", keys_json)
    plant(home / "memory" / "operator.md", "../../../keys.json")  # relative, out via ..
    plant(home / "memory" / "notes.md", keys_json)  # the memory index reads memory/*.md
    plant(home / "memory" / "up", "..")
    plant(home / "memory" / "chain.md", "up/memory/up/../../keys.json")  # a chain out via ..
    (home / "skills" / "leak").mkdir(parents=True)
    plant(home / "skills" / "leak" / "SKILL.md", keys_json)
    plant(home / "skills" / "outside", holon_env)  # a skill directory out of the catalog
    plant(open_item_with_plan(home), keys_json)
    repo = make_repo(tmp_path / "repo")
    plant(repo / "AGENTS.md", keys_json)
    (repo / "CLAUDE.md").write_text("REPO-RULES\n")
    assert cli("sandbox", "set", "a", "workspace-write", "--writable-root", str(repo))[0] == 0
    sent = []
    real = runner.run_round
    monkeypatch.setattr(
        runner, "run_round", lambda req, *a, **kw: sent.append(req) or real(req, *a, **kw)
    )
    model = write_script(
        tmp_path / "s.jsonl",
        [
            call("UseWorkspace", 1, path=str(repo)),
            call("MemorySearch", 2, query="OPENAI_API_KEY"),
            call("GetWorkItem", 3, work_item_id=next(iter(workitems.load_all(Home(home))))),
            {"text": "done"},
        ],
    )
    code, out, err = cli("prompt", "a", "look around", "--model", model)
    assert code == 0, err
    assert len(sent) == 4
    requests = "".join(r.model_dump_json() for r in sent)
    assert SECRET not in requests and "OPENAI_API_KEY" not in requests.split("MemorySearch")[0]
    assert "REPO-RULES" in requests  # CLAUDE.md stands in for the refused AGENTS.md
    code, debug_out, err = cli("debug", "prompt", "a", "--json", "--model", model)
    assert code == 0, err
    assert SECRET not in debug_out and SECRET.encode() not in every_byte(home)
    doc = json.loads(debug_out)
    refused = refused_paths(doc["manifest"])
    for path, reason in [
        (home / "AGENTS.md", "symlink_escape"),
        (home / "memory" / "self.md", "symlink_escape"),
        (home / "memory" / "operator.md", "symlink_escape"),
        (repo.resolve() / "AGENTS.md", "symlink_escape"),
        (home / "skills" / "leak" / "SKILL.md", "symlink_escape"),
        (home / "skills" / "outside" / "SKILL.md", "symlink_escape"),
    ]:
        assert refused.get(str(path)) == reason, (path, refused)
    block = next(b for b in doc["request"]["system_blocks"] if b["name"] == "refused_files")
    assert str(home / "AGENTS.md") in block["text"]
    assert {s["kind"] for s in doc["instruction_sources"]} == {"workspace"}
    code, human, err = cli("debug", "prompt", "a", "--model", model)
    assert f"not read:    {home / 'AGENTS.md'}: " in human and SECRET not in human
    code, out, err = cli("doctor", "a", "--json")
    assert SECRET not in out + err
    (agent_doc,) = json.loads(out)["agents"]
    warned = {f["file"] for f in agent_doc["findings"] if f["check"] == "prompt_file"}
    assert set(refused) | {str(home / next(iter(_plans(home))))} <= warned


def _plans(home: Path) -> list[str]:
    return [str(p.relative_to(home)) for p in (home / "work-items").glob("*/plan.md")]


def test_a_relative_symlink_inside_the_home_still_works(holon_env, tmp_path):
    home = init_agent("a")
    (home / "CLAUDE.md").write_text("SHARED-RULES\n")
    plant(home / "AGENTS.md", "CLAUDE.md")
    plant(home / "memory" / "operator.md", "../CLAUDE.md")
    model = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    proc = run("debug", "prompt", "a", "--json", "--model", model)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    texts = {b["name"]: b["text"] for b in doc["request"]["system_blocks"]}
    assert texts["agent_instructions"].endswith("SHARED-RULES")
    assert texts["memory_operator"].endswith("SHARED-RULES")
    assert doc["manifest"]["refused_files"] == [] and "refused_files" not in texts


def test_environ_fifos_devices_and_huge_files_neither_leak_nor_hang(holon_env, tmp_path):
    """A real tick in a subprocess, its own OPENAI_API_KEY set: the subprocess timeout is the
    deadline (a FIFO read blocks forever, /dev/zero reads until MemoryError)."""
    home = init_agent("a")
    os.mkfifo(home / "fifo")
    plant(home / "AGENTS.md", "/proc/self/environ")
    plant(home / "memory" / "self.md", "../fifo")  # inside the home, but a FIFO
    plant(home / "memory" / "operator.md", "/dev/zero")
    os.mkfifo(home / "memory" / "pipe.md")  # the memory index lists memory/*.md
    plant(home / "memory" / "zero.md", "/dev/zero")
    with open(home / "memory" / "huge.md", "wb") as f:
        f.truncate(50 << 20)  # 50 MB (sparse): indexed only up to its bound
    (home / "skills" / "pipe").mkdir(parents=True)
    os.mkfifo(home / "skills" / "pipe" / "SKILL.md")
    (home / "skills" / "dir" / "SKILL.md").mkdir(parents=True)
    with open(open_item_with_plan(home), "wb") as f:
        f.truncate(50 << 20)
    env = subprocess_env(OPENAI_API_KEY=ENV_SECRET)
    model = write_script(
        tmp_path / "s.jsonl",
        [call("MemorySearch", 1, query="anything"), {"text": "done"}],
    )
    proc = run("prompt", "a", "hello", "--model", model, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert any(e["kind"] == "assistant_message" for e in transcript(home)) or proc.stdout
    debug = run("debug", "prompt", "a", "--json", "--model", model, env=env, timeout=60)
    assert debug.returncode == 0, debug.stderr
    doctor = run("doctor", "a", "--json", env=env, timeout=60)
    for out in (proc.stdout + proc.stderr, debug.stdout, doctor.stdout + doctor.stderr):
        assert ENV_SECRET not in out
    assert ENV_SECRET.encode() not in every_byte(home)
    refused = refused_paths(json.loads(debug.stdout)["manifest"])
    assert refused[str(home / "AGENTS.md")] == "symlink_escape"
    assert refused[str(home / "memory" / "self.md")] == "not_regular"
    assert refused[str(home / "memory" / "operator.md")] == "symlink_escape"
    assert refused[str(home / "skills" / "pipe" / "SKILL.md")] == "not_regular"
    assert refused[str(home / "skills" / "dir" / "SKILL.md")] == "not_regular"
    findings = json.loads(doctor.stdout)["agents"][0]["findings"]
    reasons = {f["file"]: f["reason"] for f in findings if f["check"] == "prompt_file"}
    plan = str(home / _plans(home)[0])
    assert reasons[plan] == "too_large" and reasons[str(home / "AGENTS.md")] == "symlink_escape"


def test_a_fifo_agents_md_in_a_timed_tick_never_blocks(holon_env, tmp_path):
    """The same with `holon tick` (what the scheduler runs) and the FIFO as AGENTS.md itself."""
    home = init_agent("a")
    (home / "AGENTS.md").unlink()
    os.mkfifo(home / "AGENTS.md")
    model = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    assert run("enqueue", "a", "--kind", "channel_event", "--text", "hello").returncode == 0
    try:
        proc = subprocess.run(
            [*_holon(), "tick", "a", "--model", model],
            capture_output=True,
            text=True,
            timeout=60,
            env=subprocess_env(),
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the tick hung on a FIFO") from None
    assert proc.returncode == 0, proc.stderr
    assert Agent(Home(home)).state().last_tick_at


def _holon() -> list[str]:
    from helpers import holon_cmd

    return holon_cmd()


def test_a_symlink_loop_is_named_and_status_still_answers(holon_env, tmp_path):
    home = init_agent("a")
    plant(home / "AGENTS.md", "AGENTS.md")
    model = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    status = run("status", "a", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["loaded_agents_md"] == []
    debug = run("debug", "prompt", "a", "--json", "--model", model)
    assert refused_paths(json.loads(debug.stdout)["manifest"]) == {
        str(home / "AGENTS.md"): "symlink_loop"
    }
    assert run("prompt", "a", "hi", "--model", model).returncode == 0

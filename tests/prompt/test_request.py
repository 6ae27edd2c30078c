"""holon.prompt.request: the request for the next round, assembled within the token budget, with
compaction, the episode block, in-turn cuts and the manifest."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from context_helpers import settled_turn

from holon.agent import admission
from holon.agent.handle import Agent
from holon.context import history
from holon.model.conversation import ToolDefinition, ToolResultItem, UserItem
from holon.prompt import request
from holon.providers import runner
from holon.runtime.tick import tick
from holon.store import jsonl

MODEL = "scripted/x"
DEFS = [
    ToolDefinition(
        name="Echo",
        description="Echo a text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )
]


@pytest.fixture
def small_window(monkeypatch):
    """A 4096-token window with a 512-token reserve: a prompt budget of 3404 tokens."""
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "4096")


def _prior_turn(a: Agent, i: int, size: int = 1200, *, remember: bool = False) -> None:
    """A settled turn: its message (about `size` characters) and one answering round."""
    settled_turn(
        a,
        i,
        f"question {i}: " + "q" * size,
        remember=remember,
        origin_kind="operator",
        authority_class="operator_instruction",
        trust="trusted_operator",
    )


def _assemble(a: Agent, current=None, **kw):
    kw.setdefault("persist", True)
    assembly, _ = request.assemble_request(
        a,
        MODEL,
        defs=DEFS,
        guidance=["GUIDE"],
        workspace_root=a.home.root,
        max_output_tokens=512,
        current=current,
        **kw,
    )
    return assembly


def _within_budget(assembly) -> bool:
    return assembly.manifest["estimated_tokens"] <= assembly.manifest["prompt_budget"]


def _texts(assembly) -> list[str]:
    return [getattr(i, "text", "") for i in assembly.request.conversation]


def test_a_transcript_far_larger_than_the_window_stays_within_budget(agent, small_window):
    a = Agent(agent)
    compactions = 0
    for i in range(60):  # about 300 tokens a turn: 18,000 tokens in all
        _prior_turn(a, i)
        assembly = _assemble(a)
        assert _within_budget(assembly), (i, assembly.manifest["estimated_tokens"])
        compactions += bool(assembly.manifest["compaction"])
        texts = _texts(assembly)
        assert texts[0].startswith("[operator_prompt") and texts[-1] == f"answer {i}"
    assert assembly.manifest["prompt_budget"] == int((4096 - 512) * 0.95)
    state = a.state()
    assert state.context.window_start > 0
    assert 1 <= compactions == state.context.compression_epoch < 60
    # every turn is in the window or in an episode, exactly once
    window = history.read_turns(agent.transcript, state.context.window_start)
    covered = [t for e in jsonl.read(agent.context_episodes) for t in range(e["turns"]["count"])]
    assert len(covered) + len(window) == 60
    first_in_window = int(window[0].turn_id.split("_")[1])
    assert texts[0].endswith(f"question {first_in_window}: " + "q" * 1200)


def test_the_current_turn_fits_beside_a_long_history(agent, small_window):
    a = Agent(agent)
    for i in range(40):
        _prior_turn(a, i)
    offset = a.transcript_offset()
    entries = [
        a.transcript(
            "message",
            turn_id="turn_now",
            message_kind="operator_prompt",
            text="the current task " + "c" * 4000,
        )
    ]
    assembly = _assemble(a, request.CurrentTurn("turn_now", offset, entries))
    assert _within_budget(assembly)
    assert _texts(assembly)[-1].endswith("the current task " + "c" * 4000)
    # the current turn is never folded: the window ends where it begins
    assert a.state().context.window_start <= offset


def test_without_persist_a_needed_compaction_is_only_described(agent, small_window):
    a = Agent(agent)
    for i in range(30):
        _prior_turn(a, i)
    state_before = agent.state_json.read_bytes()
    assert not agent.events.exists()
    planned = _assemble(a, persist=False)
    info = planned.manifest["compaction"]
    assert info["planned"] is True and info["folded_turns"] > 0
    assert _within_budget(planned)
    assert agent.state_json.read_bytes() == state_before
    assert not agent.events.exists()  # no context_compacted event
    assert not agent.context_episodes.exists()
    turns = history.read_turns(agent.transcript, 0)
    assert info["window_start"] == turns[info["folded_turns"]].offset
    first = turns[info["folded_turns"]]
    assert _texts(planned)[0].endswith(first.message["text"])
    # carried out, the same compaction writes episodes and moves the window
    done = _assemble(a)
    record = done.manifest["compaction"]
    assert record["window_start"] == info["window_start"]
    assert record["folded_turns"] == info["folded_turns"]
    ledger = list(jsonl.read(agent.context_episodes))
    assert [e["id"] for e in ledger] == record["episodes"] and ledger
    ctx = a.state().context
    assert ctx.window_start == info["window_start"] and ctx.compression_epoch == 1
    assert done.request.conversation == planned.request.conversation
    # the next request needs no compaction: the window already starts there
    assert _assemble(a).manifest["compaction"] is None


def _distinct_turn(a: Agent, i: int) -> None:
    """A prior turn whose text differs from the others' in more than a number (not routine)."""
    word = "".join(chr(ord("a") + int(d)) for d in str(i))
    settled_turn(a, i, f"question {word}: " + "q" * 1200, origin_kind="operator")


def test_folded_turns_are_shown_as_episodes_and_the_cache_key_holds(agent, small_window):
    a = Agent(agent)
    _distinct_turn(a, 0)
    key = _assemble(a).manifest["prompt_cache_key"]
    for i in range(1, 30):
        _distinct_turn(a, i)
    assembly = _assemble(a)
    manifest = assembly.manifest
    ledger = {e["id"]: e for e in jsonl.read(agent.context_episodes)}
    shown = manifest["episodes"]
    # the newest episodes that fit the episode share, oldest first; the older ones are named by
    # the span of turns they cover, so that every folded turn is represented
    assert shown and shown == list(ledger)[-len(shown) :]
    (block,) = assembly.request.frame.context_blocks
    assert block.name == "episodes" and block.cache_breakpoint
    assert block.text.startswith("# Earlier context\n\nWorking memory as of the last compaction")
    positions = [block.text.index(f"## Episode {i} ·") for i in shown]
    assert positions == sorted(positions)
    assert ledger[shown[-1]]["summary"][:60] in block.text  # the newest, shortened at most
    assert not any(f"## Episode {i} " in block.text for i in ledger if i not in shown)
    if len(shown) < len(ledger):
        assert "## Earlier · earlier turns: not shown to fit the context window" in block.text
    (episodes_block,) = [b for b in manifest["blocks"] if b["name"] == "episodes"]
    assert episodes_block["episodes"] == shown
    assert episodes_block["tokens"] <= manifest["prompt_budget"] * request.EPISODE_SHARE
    # compaction changes the context, never the stable prefix
    assert manifest["prompt_cache_key"] == key
    assert manifest["compression_epoch"] == 1
    assert assembly.request.frame.cache.compression_epoch == 1


def _current_turn(a: Agent, rounds: int, *, artifact: str | None = None) -> request.CurrentTurn:
    offset = a.transcript_offset()
    entries = [
        a.transcript("message", turn_id="turn_now", message_kind="operator_prompt", text="go")
    ]
    entries.append(a.transcript("turn_context", turn_id="turn_now", text="# Turn context"))
    for i in range(rounds):
        call = {"id": f"c{i}", "name": "ExecCommand", "arguments": {"cmd": f"cat big{i}.log"}}
        entries.append(
            a.transcript("assistant_round", turn_id="turn_now", text="", tool_calls=[call])
        )
        result = {"exit_status": 0}
        if artifact and i == 0:
            result["artifacts"] = [{"path": artifact}]
        entries.append(
            a.transcript(
                "tool_result",
                turn_id="turn_now",
                key=f"{i}:c{i}",
                call_id=f"c{i}",
                tool_name="ExecCommand",
                status="success",
                envelope={
                    "status": "success",
                    "summary_text": f"exit 0 (big{i})",
                    "result": result,
                },
                rendered=f"BEGIN {i}\n" + "log line\n" * 300 + f"END {i}",
            )
        )
    return request.CurrentTurn("turn_now", offset, entries)


def _full_output_paths(assembly) -> list[str]:
    out = []
    for item in assembly.request.conversation:
        if isinstance(item, ToolResultItem) and "Full output: " in item.content:
            assert item.content.startswith("[summarized to fit the context window] ExecCommand")
            out.append(item.content.rsplit("Full output: ", 1)[1])
    return out


def test_older_results_of_a_long_turn_are_summarized_with_their_full_output(agent, small_window):
    a = Agent(agent)
    current = _current_turn(a, 12)
    planned = _assemble(a, current, persist=False)
    assert _within_budget(planned)
    paths = _full_output_paths(planned)
    assert paths and not any(Path(p).exists() for p in paths)  # nothing written without persist
    assembly = _assemble(a, current)
    assert _within_budget(assembly)
    assert _full_output_paths(assembly) == paths
    for p in paths:
        i = int(Path(p).name.rsplit("_c", 1)[1].split(".")[0])
        assert Path(p).read_text() == f"BEGIN {i}\n" + "log line\n" * 300 + f"END {i}"
        assert Path(p).parent == agent.artifacts
    results = [i for i in assembly.request.conversation if isinstance(i, ToolResultItem)]
    assert results[-1].content.startswith("BEGIN 11")  # the newest round stays in full
    assert "exit 0 (big0)" in results[0].content
    (block,) = [b for b in assembly.manifest["blocks"] if b["name"] == "current_turn"]
    assert block["rounds_summarized"] == len(paths) and block["rounds_omitted"] == 0


def test_a_result_with_an_artifact_points_at_it(agent, small_window, tmp_path):
    a = Agent(agent)
    log = tmp_path / "task-output.log"
    current = _current_turn(a, 12, artifact=str(log))
    assembly = _assemble(a, current)
    paths = _full_output_paths(assembly)
    assert paths[0] == str(log) and not log.exists()  # the tool's own file, not a copy


def test_the_manifest_lists_what_the_request_holds(agent, small_window):
    a = Agent(agent)
    for i in range(3):
        _prior_turn(a, i, size=100)
    current = _current_turn(a, 1)
    assembly = _assemble(a, current)
    manifest, req = assembly.manifest, assembly.request
    names = [b["name"] for b in manifest["blocks"]]
    assert names == [
        "policy",
        "mode_guidance",
        "environment",
        "agent_instructions",
        "memory_self",
        "memory_operator",
        "tool_guidance",
        "tools",
        "episodes",
        "conversation",
        "current_turn",
    ]
    blocks = {b["name"]: b for b in manifest["blocks"]}
    assert blocks["tools"]["count"] == 1
    assert blocks["tool_guidance"]["cache_breakpoint"] is True
    assert blocks["conversation"]["turns"] == 3 and blocks["conversation"]["window_start"] == 0
    assert blocks["conversation"]["items"] == 6
    assert blocks["current_turn"]["items"] == 4  # message, turn context, round, result
    assert blocks["episodes"]["tokens"] == 0 and manifest["episodes"] == []
    assert manifest["conversation_items"] == len(req.conversation) == 10
    assert manifest["prompt_cache_key"] == req.frame.cache.prompt_cache_key
    assert manifest["context_fingerprint"] == req.frame.cache.context_fingerprint
    assert (manifest["model_ref"], manifest["context_window"], manifest["output_reserve"]) == (
        MODEL,
        4096,
        512,
    )
    assert manifest["calibration_ratio"] == 1.0 and manifest["compaction"] is None
    assert manifest["estimated_tokens"] == assembly.raw_estimate
    assert manifest["compression_epoch"] == 0 and manifest["working_memory_revision"] == 0
    assert req.max_output_tokens == 512 and req.tools == DEFS and req.model_ref == MODEL
    parts = sum(b["tokens"] for b in manifest["blocks"])
    assert abs(parts - manifest["estimated_tokens"]) <= 2 * len(names)


def test_calibration_and_a_learned_window_shape_the_budget(agent, small_window):
    a = Agent(agent)
    _prior_turn(a, 0, size=100)
    plain = _assemble(a)

    def learn(s):
        s.context.calibration[MODEL] = 2.0
        s.context.learned_window[MODEL] = 3000

    a.update_state(learn)
    tuned = _assemble(a)
    assert tuned.manifest["calibration_ratio"] == 2.0
    assert tuned.manifest["context_window"] == 3000
    assert tuned.raw_estimate == plain.raw_estimate
    assert tuned.manifest["estimated_tokens"] == int(plain.raw_estimate * 2.0)
    assert _within_budget(tuned)
    assert tuned.manifest["prompt_budget"] == int((3000 - 512) * 0.95)


def test_prior_turns_are_read_once_per_turn(agent, small_window):
    a = Agent(agent)
    for i in range(3):
        _prior_turn(a, i, size=100)
    current = _current_turn(a, 1)
    first, cache = request.assemble_request(
        a,
        MODEL,
        defs=DEFS,
        guidance=[],
        workspace_root=agent.root,
        max_output_tokens=512,
        current=current,
    )
    again, cache2 = request.assemble_request(
        a,
        MODEL,
        defs=DEFS,
        guidance=[],
        workspace_root=agent.root,
        max_output_tokens=512,
        current=current,
        cache=cache,
    )
    assert cache2 is cache and len(cache.turns) == 3
    assert again.request.conversation == first.request.conversation


def test_the_episode_block_is_made_once_per_turn_and_compaction(agent, small_window, monkeypatch):
    a = Agent(agent)
    for i in range(30):
        _prior_turn(a, i, remember=True)
        _assemble(a)  # compacts as needed: episodes to show
    made = []
    block = request.episode_block
    monkeypatch.setattr(request, "episode_block", lambda *args: made.append(args) or block(*args))
    current = _current_turn(a, 1)
    first = _assemble(a, current)
    assert first.manifest["episodes"] and len(made) == 1
    again = _assemble(a, current)  # the next round of the same turn
    assert len(made) == 1 and again.request.frame == first.request.frame
    _assemble(a, _current_turn(a, 1))  # another turn makes it anew
    assert len(made) == 2


def test_a_never_compacted_huge_transcript_is_read_from_its_tail(agent, small_window, monkeypatch):
    monkeypatch.setattr(request, "MIN_SCAN_BYTES", 0)  # scan 16 bytes a budget token
    a = Agent(agent)
    for i in range(60):
        _prior_turn(a, i)
    size = agent.transcript.stat().st_size
    max_scan = int(3404 / 1.0) * 16
    assert size > 2 * max_scan
    planned = _assemble(a, persist=False)
    turns = history.read_turns(agent.transcript, 0)
    scanned = [t for t in turns if t.offset >= size - max_scan]
    info = planned.manifest["compaction"]
    # only the scanned tail is considered: the window starts inside it
    assert info["window_start"] >= scanned[0].offset
    assert info["folded_turns"] <= len(scanned)
    assert _texts(planned)[0].startswith("[operator_prompt")  # never half a line
    assert _texts(planned)[-1] == "answer 59" and _within_budget(planned)


def test_every_round_of_a_long_real_turn_keeps_the_message_within_budget(
    agent, script, monkeypatch
):
    monkeypatch.setenv("HOLON_MAX_ROUNDS", "200")
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", "10500")
    rounds = [
        {
            "text": f"step {i} " + "thinking " * 40,
            "tool_calls": [{"name": "ListWorkItems", "arguments": {}}],
        }
        for i in range(60)
    ]
    admission.admit(agent, "cli_prompt", "operator_prompt", admission.text_body("the long task"))
    sent = []
    real = runner.run_round

    def spy(req, *args, **kw):
        sent.append(req)
        return real(req, *args, **kw)

    monkeypatch.setattr(runner, "run_round", spy)
    tick(agent, model=script(*rounds, {"text": "finished"}))
    assert len(sent) == 61
    for req in sent:
        first = req.conversation[0]
        assert isinstance(first, UserItem) and first.text.endswith("]\nthe long task")
    built = [e["data"] for e in jsonl.read(agent.events) if e["kind"] == "turn_context_built"]
    assert len(built) == 61
    assert all(b["estimated_tokens"] <= b["prompt_budget"] for b in built)
    assert any(
        "earlier rounds of this turn are not shown" in getattr(i, "text", "")
        for i in sent[-1].conversation
    )
    brief = [e for e in jsonl.read(agent.transcript) if e["kind"] == "brief"][-1]
    assert brief["data"]["brief"]["text"].startswith("finished")


# -- known defects --------------------------------------------------------------------------------


def test_a_large_working_memory_snapshot_still_fits_the_budget(agent, small_window):
    a = Agent(agent)
    big = {
        "active_work": None,
        "open_work_items": [f"wi_{i} " + "objective " * 10 for i in range(5)],
        "more_open_work_items": 0,
        "last_result": "r" * 240,
        "files": [f"src/module_{i}/" + "deep/" * 10 + "file.py" for i in range(12)],
        "commands": [{"cmd": f"make target{i} " + "x" * 140, "exit": 0} for i in range(8)],
        "verification": [],
        "waiting": None,
        "tasks": [],
    }
    a.update_state(lambda s: setattr(s.working_memory, "current", big))
    over = []
    for i in range(30):
        _prior_turn(a, i)
        assembly = _assemble(a)
        if not _within_budget(assembly):
            over.append((i, assembly.manifest["estimated_tokens"]))
    assert a.state().context.compression_epoch > 0 and a.state().context.snapshot
    assert over == []


def test_a_folded_turn_is_never_lost_from_the_prompt(agent, small_window):
    a = Agent(agent)
    for i in range(8):  # one open episode covers all of them
        _prior_turn(a, i, size=1500, remember=True)
    assembly = _assemble(a)
    folded = assembly.manifest["compaction"]["folded_turns"]
    assert 0 < folded < 8
    prompt = "\n".join(b.text for b in assembly.request.frame.context_blocks)
    prompt += "\n".join(_texts(assembly))
    # each turn by its own text, or within a group of routine turns (texts that differ only in
    # their numbers: `turns A–B ×N — question A: …`)
    spans = [
        (int(a), int(b)) for a, b in re.findall(r"turns (\d+)–(\d+) ×\d+ — \w+: question", prompt)
    ]
    for i in range(8):
        grouped = any(a <= i <= b for a, b in spans)
        assert f"question {i}:" in prompt or grouped, f"turn {i} is shown nowhere"


def test_a_huge_never_compacted_transcript_is_rebased_once(agent, monkeypatch):
    """A home older than compaction: its window starts at 0 over a transcript far past the scan
    limit. The first persisted assembly starts the window at the tail it read, so later rounds
    and turns read only what follows instead of the same tail again."""
    monkeypatch.setattr(request, "MIN_SCAN_BYTES", 64 << 10)
    a = Agent(agent)
    note = {"kind": "note", "data": {"text": "x" * 200}}
    with open(agent.transcript, "a") as fh:
        for _ in range(5000):  # ~1.2 MB of notes, no turns
            fh.write(json.dumps(note) + "\n")
    _prior_turn(a, 0, size=100)
    assembly = _assemble(a)
    start = a.state().context.window_start
    assert 0 < start <= agent.transcript.stat().st_size
    assert any("question 0:" in t for t in _texts(assembly))  # the turn in the tail is kept
    rebased = [e for e in jsonl.read(agent.events) if e["kind"] == "context_window_rebased"]
    assert len(rebased) == 1 and rebased[0]["data"]["window_start"] == start
    _assemble(a)
    assert len([e for e in jsonl.read(agent.events) if e["kind"] == "context_window_rebased"]) == 1


def test_the_drop_is_planned_without_an_agent():
    """plan_drop is arithmetic over the prior turns: nothing is read or written."""
    from holon.context.history import Turn
    from holon.prompt.request import DropPlan, PriorCache, plan_drop

    turns = [Turn(0, 100, "t1"), Turn(100, 200, "t2"), Turn(200, 300, "t3")]
    prior = PriorCache(0, -2, turns, [[], [], []], [400, 400, 400])
    assert plan_drop(prior, fixed=100, ep_cap=50, current_full=100, raw_budget=2000, stop=None) == (
        DropPlan()
    )
    plan = plan_drop(prior, fixed=100, ep_cap=50, current_full=100, raw_budget=1000, stop=None)
    assert plan == DropPlan(count=2, new_start=200, before=1400, after=600)
    # a current turn that does not fit beside the fixed part: every prior turn goes
    plan = plan_drop(prior, fixed=100, ep_cap=50, current_full=900, raw_budget=1000, stop=350)
    assert plan == DropPlan(count=3, new_start=350, before=2200, after=1000)

"""holon.context.summaries: the queue, the exact input, the companion records and how the prompt
shows them."""

from __future__ import annotations

from context_helpers import settled_turn

from holon.agent.handle import Agent
from holon.context import compaction, earlier, history, rollups, summaries
from holon.store import jsonl

EPISODE = {
    "id": "ep_1",
    "created_at": "2027-01-15T08:00:00.000Z",
    "reason": "sleep",
    "workspace_id": "agent_home",
    "work_item_id": "wi_1",
    "turns": {"first_index": 3, "last_index": 4, "count": 2},
    "transcript": {"start_offset": 0, "end_offset": 500},
    "summary": "turn 3 — operator_prompt: fix it — ran `make` → exit 0",
    "decisions": ["turn 4: chose make over cmake because it is simpler"],
    "carry_forward": ["todo (wi_1): write docs"],
    "waiting": "asleep",
    "summary_source": "deterministic",
}


def test_queue_only_when_on_and_bounded(agent):
    state = Agent(agent).state()
    summaries.queue(state, [EPISODE])
    assert state.context.summaries_pending == []  # off by default
    state.model_summaries = True
    for i in range(summaries.MAX_PENDING + 3):
        summaries.queue(state, [{**EPISODE, "id": f"ep_{i}"}])
    pending = state.context.summaries_pending
    assert (
        len(pending) == summaries.MAX_PENDING and pending[-1] == f"ep_{summaries.MAX_PENDING + 2}"
    )


def test_the_input_is_the_deterministic_record_and_its_digest_is_stable():
    text = summaries.prompt_input(EPISODE)
    assert text.startswith("Episode ep_1 · turns 3–4")
    for part in ("closed because: sleep", EPISODE["summary"], EPISODE["decisions"][0]):
        assert part in text
    assert "- todo (wi_1): write docs" in text and "Waiting: asleep" in text
    assert summaries.digest(text) == summaries.digest(summaries.prompt_input(dict(EPISODE)))
    assert summaries.digest(text).startswith("sha256:")


def test_one_summary_per_episode_and_the_prompt_shows_it(agent):
    a = Agent(agent)
    jsonl.append(a.home.context_episodes, EPISODE)
    text = summaries.prompt_input(EPISODE)
    summaries.attempt(a.home, "ep_1", text, "scripted/x")
    line = summaries.record(a.home, EPISODE, text, "Fixed the build with make.", "scripted/x", {})
    assert line is not None and line["summary_source"] == "model"
    assert summaries.record(a.home, EPISODE, text, "another", "scripted/x", {}) is None
    assert [r["kind"] for r in jsonl.read(a.home.context_summaries)] == ["attempt", "summary"]
    (shown,) = earlier.cover(a.home, 1000)
    assert shown["summary"] == "Fixed the build with make." and shown["summary_source"] == "model"
    ((ids, block),) = earlier.block_parts(a.home, 1000, 4000)
    assert ids == ["ep_1"] and block.splitlines()[0].endswith("summary written by scripted/x")
    rollup = {**EPISODE, "id": "ru-1", "level": 1}
    assert summaries.shown(rollup, summaries.recorded(a.home)) is rollup  # roll-ups keep theirs


def test_roll_ups_quote_the_model_summaries_and_refine_to_them(agent):
    a = Agent(agent)
    for i in range(rollups.FANOUT):
        rec = {
            **EPISODE,
            "id": f"ep_{i}",
            "turns": {"first_index": i, "last_index": i, "count": 1},
            "transcript": {"start_offset": 100 * i, "end_offset": 100 * i + 90},
            "summary": f"turn {i} — operator_prompt: step {i} — replied: ok",
        }
        jsonl.append(a.home.context_episodes, rec)
        if i in (2, 5):
            text = summaries.prompt_input(rec)
            summaries.record(a.home, rec, text, f"Step {i} chose the plover route.", "s/x", {})
    (ru,) = rollups.roll_up(a.home, "a", 10_000)
    assert ru["summary_source"] == "mixed"
    assert ru["model_summaries"] == [
        "turns 2–2: Step 2 chose the plover route.",
        "turns 5–5: Step 5 chose the plover route.",
    ]
    assert "by the model, turns 5–5: Step 5 chose the plover route." in ru["summary"]
    assert ru["summary"].startswith("turns 0–7 ×8 — operator_prompt: step 0")  # turn lines stay
    kids = earlier.refine(a.home, [ru], 100_000)
    assert [k["summary_source"] for k in kids][1:4] == ["deterministic", "model", "deterministic"]
    assert kids[5]["summary"] == "Step 5 chose the plover route."


def test_a_compaction_queues_the_episodes_it_folds_for_the_settle(agent):
    a = Agent(agent)
    for i in range(3):
        settled_turn(a, i, f"ask {i}")
    turns = history.read_turns(agent.transcript, 0)
    summaries.set_enabled(a, True)
    record = compaction.fold(
        a, turns[:2], turns[2].offset, reason="budget", turn_id="t", before_tokens=9, after_tokens=3
    )
    assert record["episodes"] and a.state().context.summaries_pending == record["episodes"]
    summaries.set_enabled(a, False)
    assert a.state().context.summaries_pending == []


def test_the_answer_is_recorded_as_plain_lines():
    answer = "## Episode ep_9 · turn 1\n\nDid \x1b[31mthe\u202e work.\n" + "x" * 5000
    assert summaries.clean(answer).splitlines()[:2] == [
        "Episode ep_9 · turn 1",
        "Did \\u001b[31mthe\\u202e work.",  # escaped as text
    ]
    assert len(summaries.clean(answer)) == summaries.MAX_CHARS

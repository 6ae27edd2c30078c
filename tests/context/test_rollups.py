"""holon.context.rollups and holon.context.earlier: older episodes rolled up into coarser
records, and the episode block's cover of every folded turn, newest finest."""

from __future__ import annotations

from holon.context import earlier, rollups
from holon.store import jsonl

SPAN = 1000  # transcript bytes per synthetic turn


def _episode(first: int, turns: int = 3, *, facts: dict[int, str] | None = None) -> dict:
    """An episode of `turns` routine turns from `first` on; `facts` replaces some turns' asks."""
    lines = []
    for i in range(first, first + turns):
        ask = (facts or {}).get(i, f"Turn {i}: run the command and report.")
        lines.append(
            f"turn {i} — operator_prompt: {ask} — ran `make -j4` → exit 0 — replied: Turn {i} done."
        )
    return {
        "id": f"ep_{first:05d}",
        "work_item_id": "wi_1" if first < 30 else None,
        "turns": {
            "first_index": first,
            "last_index": first + turns - 1,
            "count": turns,
            "first_turn_id": f"turn_{first}",
            "last_turn_id": f"turn_{first + turns - 1}",
        },
        "transcript": {"start_offset": first * SPAN, "end_offset": (first + turns) * SPAN},
        "files": [f"src/f{first}.py"],
        "decisions": [f"turn {first}: chose B because it is faster"],
        "summary": "\n".join(lines + ["files: x"]),
        "created_at": "2027-01-15T08:00:00.000Z",
    }


def _episodes(home, count: int, turns: int = 3, facts: dict[int, str] | None = None) -> None:
    for n in range(count):
        jsonl.append(home.context_episodes, _episode(1 + n * turns, turns, facts=facts))


def _ledger(home) -> list[dict]:
    return list(jsonl.read(home.context_rollups))


def test_folded_episodes_roll_up_level_by_level(agent):
    fan = rollups.FANOUT
    _episodes(agent, fan * fan + 3)  # 67 episodes of 3 turns: turns 1-201
    written = rollups.roll_up(agent, "a", before=202 * SPAN)
    levels = [r["level"] for r in written]
    assert levels == [1] * fan + [2]
    top = written[-1]
    assert top["turns"]["first_index"] == 1 and top["turns"]["last_index"] == fan * fan * 3
    assert top["turns"]["count"] == fan * fan * 3 and top["episodes"] == fan * fan
    assert top["covers"]["ids"] == [r["id"] for r in written[:fan]]
    assert top["transcript"] == {"start_offset": SPAN, "end_offset": (fan * fan * 3 + 1) * SPAN}
    first = written[0]
    assert first["covers"]["ledger"] == "context_episodes"
    assert first["covers"]["ids"] == [f"ep_{1 + 3 * n:05d}" for n in range(fan)]
    assert first["work_item_ids"] == ["wi_1"]
    # the frontier is the level-2 roll-up; the three newest episodes are not rolled up yet
    frontier, ep_offset = rollups.cursor(agent)
    assert [(e.level, e.id) for e in frontier] == [(2, top["id"])]
    rest = rollups.folded_episodes(agent, ep_offset, 10**9)
    assert [r["id"] for _, _, r in rest] == [f"ep_{1 + 3 * n:05d}" for n in range(64, 67)]
    # nothing to do twice; the same episodes give the same ids
    assert rollups.roll_up(agent, "a", before=202 * SPAN) == []
    again = [rollups.build("a", 1, [(0, _episode(1 + 3 * n)) for n in range(fan)])["id"]]
    assert again == [first["id"]]


def test_only_episodes_wholly_before_the_window_start_roll_up(agent):
    _episodes(agent, rollups.FANOUT + 2)
    # the window starts inside the eighth episode: seven are folded, none roll up
    assert rollups.roll_up(agent, "a", before=(1 + 7 * 3 + 1) * SPAN) == []
    assert not agent.context_rollups.exists()
    (one,) = rollups.roll_up(agent, "a", before=(1 + 8 * 3) * SPAN)
    assert one["turns"]["last_index"] == 8 * 3


def test_a_roll_up_groups_routine_lines_and_keeps_each_fact(agent):
    facts = {
        1: "Remember: the database is PostgreSQL 16, chosen for row-level security.",
        10: "Remember: deploys happen from the blue-cedar branch.",
        11: "Remember: port 5432 is the primary.",
        12: "Remember: port 6432 is the pooler.",
    }
    _episodes(agent, rollups.FANOUT, facts=facts)
    (rec,) = rollups.roll_up(agent, "a", before=10**9)
    text = rec["summary"]
    assert len(text) <= rollups.SUMMARY_CHARS
    for i, fact in facts.items():
        assert f"turn {i} — operator_prompt: {fact}" in text
    # the 20 routine turns are one line naming their span and count
    routine = [line for line in text.splitlines() if "run the command and report" in line]
    assert routine == [
        "turns 2–24 ×20 — operator_prompt: Turn 2: run the command and report. — ran `make -j4` "
        "→ exit 0 — replied: Turn 2 done."
    ]
    assert "decisions: " in text and "chose B because it is faster" in text
    # a level-2 roll-up merges the groups of its children
    _episodes_after = [_episode(25 + 3 * n) for n in range(rollups.FANOUT * 7)]
    for ep in _episodes_after:
        jsonl.append(agent.context_episodes, ep)
    written = rollups.roll_up(agent, "a", before=10**9)
    top = written[-1]
    assert top["level"] == 2
    assert f"turn 1 — operator_prompt: {facts[1]}" in top["summary"]
    assert "turns 2–192 ×188 — operator_prompt: Turn 2:" in top["summary"]


def test_a_roll_up_replayed_after_a_crash_is_not_written_twice(agent):
    fan = rollups.FANOUT
    _episodes(agent, fan * fan)
    written = rollups.roll_up(agent, "a", before=10**9)
    ids = [r["id"] for r in written]
    # a crash after the third roll-up: the ledger holds only those
    lines = agent.context_rollups.read_bytes().splitlines(keepends=True)
    agent.context_rollups.write_bytes(b"".join(lines[:3]) + lines[3][:40])  # and a torn line
    again = rollups.roll_up(agent, "a", before=10**9)
    assert [r["id"] for r in _ledger(agent)] == ids
    assert [r["id"] for r in again] == ids[3:]


def _covered(recs: list[dict]) -> list[int]:
    return [t for r in recs for t in range(r["turns"]["first_index"], r["turns"]["last_index"] + 1)]


def test_the_cover_holds_every_folded_turn_once_in_a_bounded_read(agent):
    fan = rollups.FANOUT
    _episodes(agent, fan * fan + fan + 5)  # 77 episodes: turns 1-231
    start = (1 + 76 * 3) * SPAN  # the last episode is still in the window
    rollups.roll_up(agent, "a", before=start)
    recs = earlier.cover(agent, start)
    assert [r.get("level", 0) for r in recs] == [2, 1] + [0] * 4
    assert _covered(recs) == list(range(1, 76 * 3 + 1))


def test_the_block_refines_the_newest_roll_ups_and_cuts_the_oldest_first(agent):
    fan = rollups.FANOUT
    _episodes(agent, fan * fan + fan + 5)
    start = (1 + 76 * 3) * SPAN
    rollups.roll_up(agent, "a", before=start)
    recs = earlier.cover(agent, start)
    # more room: the newest roll-up opens up into what it covers, then the next newest
    assert [r.get("level", 0) for r in earlier.refine(agent, recs, 1600)] == [2] + [0] * 12
    roomy = earlier.refine(agent, recs, 3000)
    assert [r.get("level", 0) for r in roomy] == [1] * fan + [0] * 12  # never finer before coarser
    assert _covered(roomy) == list(range(1, 76 * 3 + 1))
    # a small room: older parts are cut, then merged into one span line; the newest stays
    parts = earlier.fit(earlier.refine(agent, recs, 300), 300)
    texts = [t for _, t in parts]
    assert sum(earlier._cost(t) for t in texts) <= 300
    assert texts[0].startswith("## Earlier · turns 1–")
    assert texts[-1].startswith(f"## Episode ep_{1 + 75 * 3:05d} ")
    assert parts[-1][0] == [f"ep_{1 + 75 * 3:05d}"]


def test_hand_edited_lines_are_skipped_never_a_traceback(agent):
    fan = rollups.FANOUT
    _episodes(agent, 3)
    bad = [
        {"id": "ep_bad1", "turns": [1], "transcript": {"start_offset": 1, "end_offset": 2}},
        {**_episode(500), "id": "ep_bad2", "files": [{"path": "x"}], "turns": "many"},
        {**_episode(501), "id": "ep_bad3", "transcript": {"end_offset": "soon"}},
    ]
    for rec in bad:
        jsonl.append(agent.context_episodes, rec)
    with open(agent.context_episodes, "a") as fh:
        fh.write("not json\n")
    for n in range(3, fan + 1):
        jsonl.append(agent.context_episodes, _episode(1 + n * 3))
    (one,) = rollups.roll_up(agent, "a", before=10**9)
    assert not any(i.startswith("ep_bad") for i in one["covers"]["ids"])
    # a cursor edited by hand: its entries are skipped
    lines = agent.context_rollups.read_text().splitlines()
    edited = lines[-1].replace('"episodes_offset":', '"episodes_offset":"x","was":')
    agent.context_rollups.write_text("\n".join(lines[:-1] + [edited]) + "\n")
    assert rollups.cursor(agent)[1] == 0
    assert earlier.block_parts(agent, 10**9, 2000)


def test_the_last_roll_up_is_found_from_the_end_past_a_garbage_line(agent, monkeypatch):
    _episodes(agent, rollups.FANOUT * 3)
    written = rollups.roll_up(agent, "a", before=10**9)
    assert len(written) == 3
    parsed = []
    real = jsonl.parse_line
    monkeypatch.setattr(jsonl, "parse_line", lambda line: parsed.append(line) or real(line))
    offset, rec = rollups.last_line(agent.context_rollups)
    assert rec["id"] == written[-1]["id"] and len(parsed) == 1  # the older lines are not parsed
    with open(agent.context_rollups, "a") as fh:
        fh.write("not json\n")
    assert rollups.last_line(agent.context_rollups) == (offset, rec)

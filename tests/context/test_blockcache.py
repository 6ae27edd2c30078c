"""holon.context.blockcache: the episode block kept between ticks, made again from the ledgers
whenever they, the window start or the room changed, or the kept file fails its check."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from holon.context import blockcache, earlier, rollups
from holon.store import crashpoint, jsonl
from tests.context.test_rollups import SPAN, _episode, _episodes

ROOM = 3000


@pytest.fixture
def aged(agent):
    """A home whose block needs roll-ups refined: 80 episodes of 3 turns rolled up (turns
    1-240), then 5 episodes not rolled up yet (turns 241-255)."""
    _episodes(agent, 80)
    rollups.roll_up(agent, "a", before=10**9)
    for n in range(80, 85):
        jsonl.append(agent.context_episodes, _episode(1 + n * 3))
    earlier._LAST.clear()  # as a new tick process finds it
    return agent


def _fresh(home, start: int, room: int) -> list:
    return earlier.fit(earlier.refine(home, earlier.cover(home, start), room), room)


def _kept(home, start: int, room: int) -> list | None:
    """The parts kept for this stamp, or None."""
    kept = blockcache.load(home)
    return kept[1] if kept and kept[0]["key"] == blockcache.key(home, start, room) else None


def _no_ledger_reads(monkeypatch) -> None:
    def refuse(*_args):
        raise AssertionError("the block was made again from the ledgers")

    monkeypatch.setattr(earlier, "cover", refuse)


def test_a_new_process_reuses_the_kept_block_without_reading_the_ledgers(aged, monkeypatch):
    made = earlier.block_parts(aged, 10**9, ROOM)
    assert made == _fresh(aged, 10**9, ROOM) and len(made) > 8
    earlier._LAST.clear()
    _no_ledger_reads(monkeypatch)
    assert earlier.block_parts(aged, 10**9, ROOM) == made


@pytest.mark.parametrize("change", ["episode", "rollup_ledger", "start", "room"])
def test_the_block_is_made_again_when_what_it_is_made_from_changes(aged, change):
    for n in range(85, 88):  # 8 episodes not rolled up: the next roll-up's
        jsonl.append(aged.context_episodes, _episode(1 + n * 3))
    earlier.block_parts(aged, 10**9, ROOM)
    earlier._LAST.clear()
    before = blockcache.key(aged, 10**9, ROOM)
    start, room = 10**9, ROOM
    if change == "episode":
        jsonl.append(aged.context_episodes, _episode(1000))
    elif change == "rollup_ledger":
        assert rollups.roll_up(aged, "a", before=10**9)  # appends to the roll-up ledger only
    elif change == "start":
        start = 245 * SPAN  # the episodes from turn 247 on are in the window again
    else:
        room = ROOM // 2
    assert blockcache.key(aged, start, room) != before
    assert earlier.block_parts(aged, start, room) == _fresh(aged, start, room)
    assert _kept(aged, start, room) == _fresh(aged, start, room)


@pytest.mark.parametrize("damage", ["torn", "edited", "garbage", "empty"])
def test_a_kept_file_that_fails_its_check_is_made_again(aged, damage):
    made = earlier.block_parts(aged, 10**9, ROOM)
    path = aged.episode_block
    data = path.read_bytes()
    if damage == "torn":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "edited":  # a valid file that says something else: its digest tells
        path.write_bytes(data.replace(b"Roll-up", b"Rolled-up"))
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    else:
        path.write_bytes(b"")
    earlier._LAST.clear()
    assert blockcache.load(aged) is None
    assert earlier.block_parts(aged, 10**9, ROOM) == made
    assert _kept(aged, 10**9, ROOM) == made


def test_a_block_kept_by_another_format_is_not_used(aged):
    made = earlier.block_parts(aged, 10**9, ROOM)
    header, _ = blockcache.load(aged)
    old = [[["ep_x"], "## Episode ep_x · as an older holon laid it out"]]
    body = json.dumps(old).encode()
    header = {
        "key": [blockcache.FORMAT - 1, *header["key"][1:]],
        "cover": [blockcache.FORMAT - 1, *header["cover"][1:]],
        "digest": hashlib.sha256(body).hexdigest(),
    }
    aged.episode_block.write_bytes(json.dumps(header).encode() + b"\n" + body)
    earlier._LAST.clear()
    assert blockcache.load(aged)[1] == [(["ep_x"], old[0][1])]  # a well-formed file
    assert earlier.block_parts(aged, 10**9, ROOM) == made


def test_a_compaction_that_leaves_the_cover_as_it_was_reuses_the_block(aged, monkeypatch):
    made = earlier.block_parts(aged, 10**9, ROOM)
    earlier._LAST.clear()
    moved = 10**9 + 5 * SPAN  # the window start moved; no record was folded or rolled up

    def refuse(*_args):
        raise AssertionError("the same cover was refined again")

    monkeypatch.setattr(earlier, "refine", refuse)
    assert earlier.block_parts(aged, moved, ROOM) == made
    assert _kept(aged, moved, ROOM) == made  # the new stamp is kept: the next tick reads no more


def test_a_cache_that_cannot_be_written_leaves_the_block_as_it_is(aged, monkeypatch):
    def full_disk(*_args, **_kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(blockcache, "write_bytes", full_disk)
    assert earlier.block_parts(aged, 10**9, ROOM) == _fresh(aged, 10**9, ROOM)
    assert not aged.episode_block.exists()


def test_keeping_the_block_costs_no_fsync_and_no_crash_point(aged, monkeypatch):
    synced, steps = [], []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    monkeypatch.setattr(crashpoint, "step", lambda name: steps.append(name))
    earlier.block_parts(aged, 10**9, ROOM)
    assert aged.episode_block.exists() and synced == [] and steps == []

"""holon.ids: prefix, a time-ordered part and randomness."""

from __future__ import annotations

import re
import time

from holon.ids import _base36, new_id


def test_shape_and_prefix():
    ident = new_id("msg")
    assert re.fullmatch(r"msg_[0-9a-z]{11}[0-9a-f]{6}", ident)
    assert new_id("evt").startswith("evt_")


def test_sortable_by_creation():
    made = []
    for _ in range(20):
        made.append(new_id("x"))
        time.sleep(0.002)  # distinct microseconds: the time part decides
    assert sorted(made) == made


def test_time_part_encodes_microseconds():
    before = time.time_ns() // 1000
    ident = new_id("x")
    after = time.time_ns() // 1000
    assert before <= int(ident[2:13], 36) <= after


def test_unique_in_a_tight_loop():
    ids = [new_id("x") for _ in range(5000)]
    assert len(set(ids)) == len(ids)


def test_base36():
    assert _base36(0) == "0"
    assert _base36(35) == "z"
    assert _base36(36) == "10"
    assert int(_base36(123456789), 36) == 123456789

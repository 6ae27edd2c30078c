"""holon.home.dueindex: entry names, marks only into an index that exists, and when a pass must
be a full one."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from holon.home import dueindex, registry
from holon.home.init import init_home


def test_entry_names_carry_the_home_and_its_time(holon_env):
    root = holon_env / "agents" / "a"
    key = dueindex.key_of(root)
    assert key.startswith("a~") and len(key) == 2 + 16
    assert dueindex.entry_name(root) == key
    assert dueindex.entry_name(root, 12.3456) == f"{key}@12345"  # rounded down: early
    assert dueindex.entry_name(root, float("nan")) == key
    assert dueindex.parse(f"{key}@12345") == (key, 12.345)
    assert dueindex.parse(key) == (key, None) and dueindex.parse(f"{key}@x") == (key, None)
    assert dueindex.parse(".scan.json") is None and dueindex.parse("stray") is None
    assert dueindex.desired([], None, False) is None
    assert dueindex.desired(["queued_messages"], 5.0, False) == ""
    assert dueindex.desired([], None, True) == "" and dueindex.desired([], 5.0, False) == "@5000"


def test_marks_go_only_into_an_index_that_exists(holon_env):
    home = init_home(None, "a")
    dueindex.mark(home.root)
    assert dueindex.listing() is None  # no index yet: the first pass is a full one anyway
    assert dueindex.ensure() and oct(os.stat(dueindex.index_dir()).st_mode & 0o777) == "0o700"
    dueindex.mark(home.root)
    dueindex.mark(home.root)  # again: the same entry
    dueindex.mark(home.root, 100.0)
    assert sorted(dueindex.listing()) == [
        dueindex.key_of(home.root),
        dueindex.key_of(home.root) + "@100000",
    ]
    assert dueindex.target(dueindex.key_of(home.root)) == str(home.root)


def test_when_a_pass_must_be_full(holon_env):
    init_home(None, "a")
    assert dueindex.needs_full_pass(None)[0]  # no record
    dueindex.ensure()
    started = time.time() - 10  # the agents directory settled before the pass
    dueindex.record_full_pass(None, started, dueindex.signature(), [])
    full, broken, left = dueindex.needs_full_pass(None)
    assert not full and broken == [] and 0 < left <= dueindex.FULL_PASS_EVERY_S
    assert dueindex.needs_full_pass("0-of-2")[0]  # each shard keeps its own record
    (holon_env / "agents" / "b").mkdir()  # made by another hand: the agents directory changed
    assert dueindex.needs_full_pass(None)[0]
    dueindex.record_full_pass(None, time.time(), dueindex.signature(), [])
    assert dueindex.needs_full_pass(None)[0]  # it changed too close to the pass to trust
    record = Path(dueindex.index_dir(), ".scan.json")
    dueindex.record_full_pass(None, started - dueindex.FULL_PASS_EVERY_S, dueindex.signature(), [])
    assert dueindex.needs_full_pass(None)[0]  # too old
    record.write_text("{not json")
    assert dueindex.needs_full_pass(None) == (True, [], dueindex.FULL_PASS_EVERY_S)
    gone = {"agent_id": "g", "home": str(holon_env / "g"), "status": "missing"}
    dueindex.record_full_pass(None, started, dueindex.signature(), [gone])
    assert not dueindex.needs_full_pass(None)[0]
    (holon_env / "g").mkdir()  # a missing home came back
    assert dueindex.needs_full_pass(None)[0]
    assert json.loads(record.read_text())["broken"] == [gone]


def test_holons_own_changes_keep_the_pass_record_current(holon_env, tmp_path):
    a = init_home(None, "a")
    far = init_home(str(tmp_path / "far"), "far")
    shutil.rmtree(far.root)  # registered, and missing
    dueindex.ensure()
    started = time.time() - 10
    gone = {"agent_id": "far", "home": str(far.root), "status": "missing"}
    for shard in (None, "0-of-2"):
        dueindex.record_full_pass(shard, started, dueindex.signature(), [gone])
    record = Path(dueindex.index_dir(), ".scan.json")
    b = init_home(None, "b")  # a new home: marked, and the records follow the change
    assert dueindex.key_of(b.root) in dueindex.listing()
    assert not dueindex.needs_full_pass(None)[0] and not dueindex.needs_full_pass("0-of-2")[0]
    assert json.loads(record.read_text())["full_pass_at"] == started  # no pass ran
    registry.archive("a", a.root)
    assert not dueindex.needs_full_pass(None)[0]
    registry.unregister("far")  # a forgotten agent is no longer reported broken
    assert dueindex.needs_full_pass(None)[:2] == (False, [])
    (holon_env / "agents" / "c").mkdir()  # another hand's change before holon's: not carried
    init_home(None, "d")
    assert dueindex.needs_full_pass(None)[0] and dueindex.needs_full_pass("0-of-2")[0]

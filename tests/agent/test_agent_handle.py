"""holon.agent.handle: cached state that notices other writers, event_seq, transcript, briefs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from holon.agent.handle import Agent
from holon.model.records import AgentState, AgentStatus
from holon.store import jsonl
from holon.store.atomic import read_json, write_json


def test_state_defaults_when_file_is_missing(agent):
    agent.state_json.unlink()
    state = Agent(agent).state()
    assert state.id == "a" and state.status is AgentStatus.awake_idle


def test_state_is_cached_until_the_file_changes(agent):
    a = Agent(agent)
    first = a.state()
    assert a.state() is first  # one stat, no re-read
    Agent(agent).update_state(lambda s: setattr(s, "pending", 7))
    second = a.state()
    assert second is not first and second.pending == 7
    assert first.pending == 0


def test_state_sees_a_same_size_replacement(agent):
    a, b = Agent(agent), Agent(agent)
    a.state()
    b.update_state(lambda s: setattr(s, "pending", 1))
    b.update_state(lambda s: setattr(s, "pending", 2))  # same size as pending=0, a new file
    assert a.state().pending == 2


def test_state_sees_another_process(agent):
    from helpers import subprocess_env

    a = Agent(agent)
    assert a.state().model_override is None
    code = (
        "import sys\nfrom holon.home.layout import Home\nfrom holon.agent.handle import Agent\n"
        "Agent(Home(sys.argv[1])).update_state(lambda s: setattr(s, 'model_override', 'p/m'))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(agent.root)], check=True, env=subprocess_env())
    assert a.state().model_override == "p/m"


def test_state_sees_a_file_written_by_hand(agent):
    a = Agent(agent)
    a.state()
    data = read_json(agent.state_json)
    data["status"] = "paused"
    write_json(agent.state_json, data)
    assert a.status() is AgentStatus.paused


def test_update_state_works_on_a_copy(agent):
    a = Agent(agent)
    before = a.state()
    on_disk = agent.state_json.read_bytes()

    def half_done(s: AgentState) -> None:
        s.pending = 99
        s.active_task_ids.append("task_x")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        a.update_state(half_done)
    assert a.state() is before and before.pending == 0 and before.active_task_ids == []
    assert agent.state_json.read_bytes() == on_disk


def test_update_state_persists_and_returns_the_new_state(agent):
    a = Agent(agent)
    old = a.state()
    new = a.update_state(lambda s: s.active_task_ids.append("task_1"))
    assert new.active_task_ids == ["task_1"] and old.active_task_ids == []
    assert a.state() is new
    assert read_json(agent.state_json)["active_task_ids"] == ["task_1"]
    assert Agent(agent).state().active_task_ids == ["task_1"]


def test_update_state_reads_what_another_instance_wrote(agent):
    a, b = Agent(agent), Agent(agent)
    a.state()
    b.update_state(lambda s: setattr(s, "pending", 3))
    a.update_state(lambda s: setattr(s, "turn_index", 5))  # must not lose b's change
    state = Agent(agent).state()
    assert (state.pending, state.turn_index) == (3, 5)


def test_event_seq_contiguous_across_instances(agent):
    a, b = Agent(agent), Agent(agent)
    for i in range(6):
        (a if i % 2 == 0 else b).event("ping", n=i)
    a.event("ping", n=6)
    a.event("ping", n=7)
    events = list(jsonl.read(agent.events))
    assert [e["event_seq"] for e in events] == list(range(1, 9))
    assert [e["data"]["n"] for e in events] == list(range(8))
    assert all(e["agent_id"] == "a" and e["id"].startswith("evt_") for e in events)


def test_event_seq_continues_after_another_process(agent):
    from helpers import subprocess_env

    a = Agent(agent)
    a.event("first")
    code = (
        "import sys\nfrom holon.home.layout import Home\nfrom holon.agent.handle import Agent\n"
        "h = Agent(Home(sys.argv[1]))\nh.event('other')\nh.event('other')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(agent.root)], check=True, env=subprocess_env())
    rec = a.event("last")
    assert rec["event_seq"] == 4
    assert [e["event_seq"] for e in jsonl.read(agent.events)] == [1, 2, 3, 4]


def test_event_seq_after_a_torn_tail(agent):
    a = Agent(agent)
    a.event("one")
    with open(agent.events, "ab") as fh:
        fh.write(b'{"event_seq": 2, "torn')
    assert Agent(agent).event("two")["event_seq"] == 2
    assert [e["event_seq"] for e in jsonl.read(agent.events)] == [1, 2]


def test_transcript_entry_and_offset(agent):
    a = Agent(agent)
    assert a.transcript_offset() == 0
    rec = a.transcript("note", turn_id="turn_1", message_id="msg_1", text="hello")
    assert (
        rec["kind"] == "note" and rec["data"] == {"text": "hello"} and rec["id"].startswith("tr_")
    )
    assert list(jsonl.read(agent.transcript)) == [rec]
    assert a.transcript_offset() == agent.transcript.stat().st_size > 0


def test_brief_writes_ledger_transcript_and_state(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "1800000000")
    a = Agent(agent)
    rec = a.brief(
        "result",
        "All done",
        related_message_id="msg_1",
        visibility="work_done",
        work_item_id="wi_1",
        turn_id="turn_1",
    )
    assert rec["id"].startswith("brf_") and rec["kind"] == "result" and rec["text"] == "All done"
    assert rec["created_at"] == "2027-01-15T08:00:00.000Z"
    assert list(jsonl.read(agent.briefs)) == [rec]
    (entry,) = list(jsonl.read(agent.transcript))
    assert entry["kind"] == "brief" and entry["data"] == {"brief": rec}
    assert (entry["turn_id"], entry["message_id"]) == ("turn_1", "msg_1")
    assert a.state().last_brief_at == rec["created_at"]
    assert read_json(agent.state_json)["last_brief_at"] == "2027-01-15T08:00:00.000Z"


def test_brief_kind_is_validated(agent):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Agent(agent).brief("gossip", "x")
    assert not agent.briefs.exists()


def test_state_lock_is_reentrant_and_exclusive(agent):
    from holon.store.locks import FileLock, LockBusy

    a = Agent(agent)
    with a.state_lock():
        with a.state_lock():
            a.event("nested")  # takes the lock again inside
        with pytest.raises(LockBusy):
            FileLock(agent.state_lock).acquire(blocking=False)
    probe = FileLock(agent.state_lock)
    probe.acquire(blocking=False)
    probe.release()


def test_identity_and_repr(agent):
    a = Agent(agent)
    assert a.identity()["agent_id"] == "a" and a.id == "a"
    assert repr(a) == f"Agent('a', {str(agent.root)!r})"


@pytest.mark.parametrize("bad", ["7x", None, 2.5, True, -3, {"n": 1}])
def test_a_record_with_a_malformed_event_seq_never_stops_the_agent(tmp_path, bad):
    """A record whose event_seq is not a non-negative integer (edited by hand, written by another
    tool): the agent still ticks, `holon events` still lists, and numbering continues after the
    highest good event_seq; no record is lost."""
    from helpers import init_agent, run, write_script

    home = init_agent("a")
    events = home / ".holon" / "ledger" / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    text = events.read_text() if events.exists() else ""
    good = [0] + [json.loads(line)["event_seq"] for line in text.splitlines()]
    with events.open("a") as fh:
        fh.write(json.dumps({"schema_version": 1, "event_seq": bad, "kind": "odd", "data": {}}))
        fh.write("\n")
    model = write_script(tmp_path / "s.jsonl", [{"text": "still here"}])
    proc = run("prompt", "a", "hello", "--model", model)
    assert proc.returncode == 0, proc.stderr
    seqs = [json.loads(line).get("event_seq") for line in events.read_text().splitlines()]
    after = seqs[len(good) :]
    assert after and after == list(range(max(good) + 1, max(good) + 1 + len(after)))
    listed = run("events", "a")
    assert listed.returncode == 0 and " odd " in listed.stdout, listed.stderr
    doctor = json.loads(run("doctor", "a", "--json").stdout)
    (found,) = [f for a in doctor["agents"] for f in a["findings"] if f["check"] == "events"]
    assert found["status"] == "warn" and found["count"] == 1


def test_building_an_agent_touches_no_file_and_the_home_is_prepared_once(agent, monkeypatch):
    """Agent(home) only remembers the home; `ensure` (run by the first read or write) re-creates
    the runtime directories and upgrades the home, once per process per home."""
    import shutil

    from holon.agent import handle
    from holon.home import migrate
    from holon.home.layout import Home

    shutil.rmtree(agent.dot / "queue")  # what a clone lacks
    monkeypatch.setattr(handle, "_ENSURED", set())
    calls = []
    real = migrate.ensure_current
    monkeypatch.setattr(migrate, "ensure_current", lambda h: calls.append(h) or real(h))
    a = Agent(Home(agent.root))  # no id: reading agent.json for it is a read too
    assert not (agent.dot / "queue").exists() and calls == []
    assert a.state().status is AgentStatus.awake_idle
    assert (agent.dot / "queue" / "new").is_dir() and len(calls) == 1
    Agent(Home(agent.root)).state()
    Agent(agent).event("x")
    assert len(calls) == 1

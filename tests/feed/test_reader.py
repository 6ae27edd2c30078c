"""Reading records from the ledgers: from any event_seq, then only what is new; several agents
merged in time order; an agent that appears while following is read from its start."""

from __future__ import annotations

from holon.agent.handle import Agent
from holon.feed.reader import Feed, Tail, at_end, records
from holon.home.init import init_home


def test_records_replay_from_any_event_seq(agent):
    a = Agent(agent)
    a.event("timer_fired", timer_id="t1")
    a.brief("ack", "need you", visibility="action_required")
    seqs = [r["event_seq"] for r in records(agent)]
    assert seqs == sorted(seqs) and len(seqs) >= 2
    assert [r["event_seq"] for r in records(agent, seqs[-2])] == seqs[-1:]
    assert records(agent, seqs[-1]) == []


def test_a_tail_reports_only_what_is_appended_after_it(agent):
    a = Agent(agent)
    a.event("timer_fired", timer_id="t1")
    tail = at_end(agent)
    assert tail.poll() == []
    a.brief("result", "done")
    [rec] = tail.poll()
    assert rec["source_event_kind"] == "brief_recorded" and rec["summary"] == "done"
    assert tail.poll() == []


def test_the_feed_merges_agents_and_picks_up_new_ones(agent):
    homes = [agent]
    Agent(agent).brief("ack", "first", visibility="action_required")
    feed = Feed(lambda: list(homes), "info")
    assert [r["summary"] for r in feed.backlog()] == ["first"]
    b = init_home(None, "b")
    Agent(b).brief("ack", "from b", visibility="work_done")
    Agent(b).event("timer_fired", timer_id="t")  # progress: not shown at info
    homes.append(b)
    assert [(r["agent_id"], r["summary"]) for r in feed.poll()] == [("b", "from b")]
    assert feed.poll() == []


def test_a_tail_starts_where_it_is_told(agent):
    Agent(agent).brief("ack", "one")
    assert Tail(agent, since_seq=10_000).poll() == []

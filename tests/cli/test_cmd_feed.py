"""`holon feed`: the operator feed across agents (levels, --since-seq, --jsonl), a NotifyOperator
call shown as action_required, and `--follow` that ends when its reader goes away."""

from __future__ import annotations

import json
import subprocess

from cmd_checks import fails, ok
from helpers import holon_cmd, subprocess_env

from holon.agent.handle import Agent
from holon.cli.feed import feed_cmd

NOTIFY = {
    "text": "",
    "tool_calls": [
        {
            "name": "NotifyOperator",
            "arguments": {"text": "Approve the deploy?", "visibility": "action_required"},
        }
    ],
}


def _prompted(agent, script) -> None:
    from holon.ops import prompt

    model = script(NOTIFY | {"text": "Checking first."}, {"text": "Waiting for you."})
    assert prompt.prompt(agent, "deploy", wait=True, model=model)["status"] == "completed"


def test_feed_jsonl_shows_the_notify_operator_call_as_action_required(agent, script):
    _prompted(agent, script)
    records = [json.loads(x) for x in ok(feed_cmd, "a", "--jsonl").stdout.splitlines()]
    assert [(r["visibility"], r["summary"]) for r in records] == [
        ("action_required", "Approve the deploy?"),
        ("turn_result", "Waiting for you."),
    ]
    assert records[0]["source_event_kind"] == "brief_recorded"
    assert records[0]["provenance"]["message_id"] and records[0]["agent_id"] == "a"


def test_levels_and_since_seq(agent, script):
    _prompted(agent, script)
    info = ok(feed_cmd, "a").stdout.splitlines()
    assert len(info) == 2 and "[action_required] Action required: Approve the deploy?" in info[0]
    verbose = ok(feed_cmd, "a", "--level", "verbose").stdout
    assert "Assistant progress: Checking first." in verbose
    assert "NotifyOperator: success" in verbose and "turn_terminal" not in verbose
    debug = ok(feed_cmd, "a", "--level", "debug").stdout.splitlines()
    assert len(debug) > len(verbose.splitlines())
    first = json.loads(ok(feed_cmd, "a", "--jsonl").stdout.splitlines()[0])["event_seq"]
    after = ok(feed_cmd, "a", "--jsonl", "--since-seq", str(first)).stdout.splitlines()
    assert [json.loads(x)["summary"] for x in after] == ["Waiting for you."]


def test_all_covers_every_agent(agent):
    from holon.home.init import init_home

    b = init_home(None, "b")
    Agent(agent).brief("ack", "a needs you", visibility="action_required")
    Agent(b).brief("result", "b is done", visibility="work_done")
    lines = ok(feed_cmd, "--all").stdout.splitlines()
    assert [x.split(" ")[1] for x in lines] == ["a", "b"]


def test_an_agent_or_all_is_required(agent):
    fails("feed", code=2, kind="missing_agent")
    fails("feed", "a", "--all", code=2, kind="missing_agent")
    fails("feed", "nobody", code=2, kind="unknown_agent")


def test_follow_ends_when_its_reader_goes_away(agent):
    """`holon feed --follow | head -1`: head exits after the first line, and the feed sees the
    pipe close (POLLERR) while it waits, and ends."""
    Agent(agent).brief("ack", "look at me", visibility="action_required")
    feed = subprocess.Popen(
        [*holon_cmd(), "feed", "a", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    with feed:
        try:
            head = subprocess.run(["head", "-1"], stdin=feed.stdout, capture_output=True)
            feed.stdout.close()
            assert b"look at me" in head.stdout
            assert feed.wait(timeout=30) == 0, feed.stderr.read()
        finally:
            feed.kill()


def test_follow_prints_records_of_agents_that_appear_later(agent):
    from helpers import wait_for

    feed = subprocess.Popen(
        [*holon_cmd(), "feed", "--all", "--follow", "--jsonl"],
        stdout=subprocess.PIPE,
        env=subprocess_env(),
    )
    with feed:
        try:
            from holon.home.init import init_home

            b = init_home(None, "b")
            Agent(b).brief("ack", "new agent needs you", visibility="action_required")
            line = wait_for(feed.stdout.readline, timeout=30)
            assert json.loads(line)["agent_id"] == "b"
        finally:
            feed.terminate()

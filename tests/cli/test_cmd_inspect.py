"""`holon status|transcript|events|briefs`: the summary document and the ledger views (text and
JSON lines, --tail, --since-seq); unknown agents are usage errors."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok, ok_json, usage_error

from holon.cli.inspect import (
    briefs_cmd,
    event_line,
    events_cmd,
    status_cmd,
    transcript_cmd,
    transcript_line,
)
from holon.store import jsonl

SUMMARY_KEYS = {
    "agent_id",
    "home",
    "status",
    "closure",
    "queue",
    "tasks",
    "model",
    "token_usage",
    "current_work_item",
    "last_tick_at",
    "timers",
    "next_due_at",
}


@pytest.fixture
def ran(agent, script):
    """Agent `a` after one prompt whose turn ran `echo hi` and answered."""
    from holon.ops import prompt

    model = script(
        {
            "text": "Looking.",
            "tool_calls": [
                {"name": "ExecCommand", "arguments": {"cmd": "echo hi", "login": False}}
            ],
            "usage": {"input_tokens": 12, "output_tokens": 3},
        },
        {"text": "All done."},
    )
    out = prompt.prompt(agent, "say hi", wait=True, model=model)
    assert out["status"] == "completed", out
    return agent


def jsonl_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_status_json_and_text_of_a_fresh_agent(agent):
    doc = ok_json(status_cmd, "a", "--json")
    assert SUMMARY_KEYS <= set(doc)
    assert doc["agent_id"] == "a" and doc["status"] == "awake_idle" and doc["home"] == str(agent)
    assert doc["queue"] == {
        "pending": 0,
        "in_progress": 0,
        "dead_letters": 0,
        "deferred": 0,
        "next_not_before": None,
    }
    assert doc["token_usage"]["total"]["input_tokens"] == 0
    lines = ok(status_cmd, "a").stdout.splitlines()
    assert lines[0] == f"agent:    a ({agent})"
    assert lines[1] == "status:   awake_idle"
    assert lines[2] == "queue:    0 pending, 0 in progress, 0 dead letters"
    assert lines[4].startswith("sandbox:  workspace-write, network deny (")
    assert lines[5] == "model:    (none) (runtime_default)"
    assert lines[6] == "tokens:   0 in, 0 out, 0 rounds"


def test_status_after_a_turn_counts_tokens(ran):
    doc = ok_json(status_cmd, "a", "--json")
    assert doc["token_usage"]["total"]["input_tokens"] == 12
    assert doc["token_usage"]["total_model_rounds"] == 2
    assert "tokens:   12 in, 3 out, 2 rounds" in ok(status_cmd, "a").stdout


def test_transcript_jsonl_text_and_tail(ran):
    records = jsonl_of(ok(transcript_cmd, "a", "--jsonl"))
    assert records == list(jsonl.read(ran.transcript))
    kinds = [r["kind"] for r in records]
    for kind in ("message", "assistant_round", "tool_call", "tool_result", "brief"):
        assert kind in kinds
    text = ok(transcript_cmd, "a").stdout
    assert "[operator_prompt · operator_instruction] say hi" in text
    assert "assistant: Looking.  → ExecCommand" in text
    assert 'tool call ExecCommand {"cmd": "echo hi", "login": false}' in text
    assert "tool result ExecCommand (success):" in text
    assert "brief (result): All done." in text
    assert jsonl_of(ok(transcript_cmd, "a", "--jsonl", "--tail", "2")) == records[-2:]
    assert ok(transcript_cmd, "a", "--tail", "0").stdout == ""


def test_events_since_seq(ran):
    events = jsonl_of(ok(events_cmd, "a", "--jsonl"))
    seqs = [e["event_seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs) and len(seqs) > 3
    cut = seqs[2]
    later = jsonl_of(ok(events_cmd, "a", "--jsonl", "--since-seq", str(cut)))
    assert [e["event_seq"] for e in later] == [s for s in seqs if s > cut]
    lines = ok(events_cmd, "a").stdout.splitlines()
    assert len(lines) == len(events) and lines[0] == event_line(events[0])
    assert "message_admitted" in ok(events_cmd, "a").stdout


def test_briefs_jsonl_text_and_tail(ran):
    briefs = jsonl_of(ok(briefs_cmd, "a", "--jsonl"))
    assert briefs and briefs[-1]["kind"] == "result" and briefs[-1]["text"] == "All done."
    assert ok(briefs_cmd, "a").stdout.splitlines()[-1].endswith(" result: All done.")
    assert jsonl_of(ok(briefs_cmd, "a", "--jsonl", "--tail", "1")) == briefs[-1:]


def test_empty_ledgers_print_nothing(agent):
    assert ok(transcript_cmd, "a").stdout == ""
    assert ok(briefs_cmd, "a", "--jsonl").stdout == ""


def test_a_freeform_call_shows_its_patch_headers_bounded():
    patch = "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n"
    patch += "".join(f"@@ -{i} +{i} @@\n-a\n+b\n" for i in range(10, 40))
    rec = {
        "created_at": "T",
        "kind": "tool_call",
        "data": {"name": "ApplyPatch", "arguments": None, "raw_arguments": patch},
    }
    lines = transcript_line(rec).splitlines()
    assert lines[0] == "T tool call ApplyPatch (raw text, 96 lines)"
    assert lines[1:5] == ["  --- a/f.py", "  +++ b/f.py", "  @@ -1,2 +1,2 @@", "  @@ -10 +10 @@"]
    assert lines[-1] == "  ... (13 more)" and len(lines) == 22 and "null" not in lines[0]
    rec["data"]["raw_arguments"] = "not a patch\nsecond"
    assert (
        transcript_line(rec)
        == "T tool call ApplyPatch (raw text, 2 lines)\n  not a patch\n  second"
    )


def test_line_renderers_cover_every_kind():
    base = {"created_at": "T"}
    assert (
        transcript_line({**base, "kind": "runtime_failure", "data": {"summary": "boom"}})
        == "T runtime failure: boom"
    )
    assert transcript_line({**base, "kind": "turn_terminal", "data": {}}) == "T turn_terminal"
    assert (
        transcript_line({**base, "kind": "assistant_round", "data": {"text": "ok"}})
        == "T assistant: ok"
    )
    line = event_line(
        {
            "event_seq": 7,
            "created_at": "T",
            "kind": "k",
            "data": {"a": 1, "error": "hidden", "nested": {"x": 1}},
        }
    )
    assert line == "     7 T k a=1"


@pytest.mark.parametrize("name", ["status", "transcript", "events", "briefs"])
def test_unknown_agent(name):
    fails(name, "nobody", code=2, kind="unknown_agent")


def test_negative_tail_and_seq_are_usage_errors(agent):
    usage_error(transcript_cmd, "a", "--tail", "-1")
    usage_error(briefs_cmd, "a", "--tail", "-1")
    usage_error(events_cmd, "a", "--since-seq", "-1")


def test_status_says_until_when_it_sleeps_and_why_the_closure_failed(agent, script):
    from helpers import run

    sleep = {
        "text": "resting",
        "tool_calls": [{"name": "Sleep", "arguments": {"duration_ms": 600000}}],
    }
    model = script(sleep, {"text": "asleep now"}, name="s.jsonl")
    assert run("prompt", "a", "rest", "--model", model).returncode == 0
    line = run("status", "a").stdout.splitlines()[1]
    assert line.startswith("status:   asleep until 20"), line
    failing = script({"error": {"kind": "server_error"}}, name="f.jsonl")
    assert run("prompt", "a", "fail", "--model", failing).returncode == 1
    line = run("status", "a").stdout.splitlines()[1]
    assert " · closure failed: provider request failed" in line, line

"""The console's plain parts: the prompt history, display level names, the conversation read
from the ledgers (backlog, new entries, what each level shows, what settles a prompt), the turn
runner's admission and the overlays' views. No terminal and no tick here."""

from __future__ import annotations

import pytest

from holon.agent import admission
from holon.agent.handle import Agent
from holon.console import views
from holon.console.app import render
from holon.console.commands import help_text
from holon.console.composer import History
from holon.console.conversation import Conversation, activity, level_named, settles, visible
from holon.console.runner import TurnRunner
from holon.errors import HolonError
from holon.home.init import init_home
from holon.store import jsonl


def test_history_walks_back_and_forward_and_keeps_the_draft():
    h = History(["one", "two"])
    assert h.back("draft") == "two" and h.back("two") == "one" and h.back("one") is None
    assert h.forward() == "two" and h.forward() == "draft" and h.forward() is None
    h.add("two")  # the same prompt again is one entry
    h.add("three")
    assert h.items == ["one", "two", "three"] and h.back("") == "three"


@pytest.mark.parametrize(
    ("given", "level"),
    [("3", "info"), ("4", "verbose"), ("5", "debug"), (" Verbose ", "verbose"), ("6", None)],
)
def test_display_levels_by_name_or_number(given, level):
    assert level_named(given) == level


def _prompt(home, text: str) -> str:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))["id"]


def test_the_conversation_replays_the_backlog_then_follows(agent):
    first = _prompt(agent, "earlier question")
    Agent(agent).brief("result", "earlier answer", related_message_id=first)
    conv = Conversation(agent)
    assert [e.text for e in conv.entries if e.kind != "activity"] == [
        "earlier question",
        "earlier answer",
    ]
    assert conv.poll() == []
    second = _prompt(agent, "new \x1b[31mquestion")
    Agent(agent).brief("ack", "need you", visibility="action_required")
    new = conv.poll()
    assert new[0].kind == "operator" and new[0].text == "new \\u001b[31mquestion"
    assert new[0].message_id == second
    asks = [e for e in new if e.kind == "brief"]
    assert asks[0].text == "need you" and str(render(asks[0], "info")).startswith(
        "Action required: need you"
    )


def test_levels_show_more_and_state_sync_is_never_a_message(agent):
    a = Agent(agent)
    a.event("timer_fired", timer_id="t1")  # progress
    a.event("message_admitted", message_id="m1", message_kind="operator_prompt")  # trace
    a.event("agent_state_changed")  # state sync
    conv = Conversation(agent)
    kinds = {
        lvl: [e.record["source_event_kind"] for e in conv.entries if visible(e, lvl)]
        for lvl in ("info", "verbose", "debug")
    }
    assert kinds["info"] == []
    assert kinds["verbose"] == ["timer_fired"]
    assert kinds["debug"] == ["timer_fired", "message_admitted"]


def test_a_result_brief_settles_its_prompt(agent):
    message_id = _prompt(agent, "q")
    conv = Conversation(agent)
    Agent(agent).brief("result", "a", related_message_id=message_id)
    assert message_id in {settles(e) for e in conv.poll()}


def test_the_runner_admits_a_prompt_once_as_holon_prompt_does(agent, script):
    runner = TurnRunner(agent, model=script({"text": "x"}))
    message_id = runner.submit("hello")
    (msg,) = list(jsonl.read(agent.messages))
    assert msg["id"] == message_id and msg["delivery_surface"] == "cli_prompt"
    assert runner.wanted and not runner.running and runner.detach() is None
    with pytest.raises(HolonError) as exc:
        TurnRunner(agent).submit("no model")  # refused before anything is admitted
    assert exc.value.kind == "no_model_configured"
    with pytest.raises(HolonError):
        runner.submit("   ")
    assert len(list(jsonl.read(agent.messages))) == 1


def test_views_list_agents_with_their_unread_asks_and_tasks(agent):
    other = init_home(None, "b")
    Agent(other).brief("ack", "which region?", visibility="action_required")
    rows = {r["agent_id"]: r["label"] for r in views.agent_rows("a")}
    assert rows == {"a": "* a", "b": "  b  1 action required"}
    _prompt(other, "eu")  # the operator answered
    assert {r["agent_id"]: r["label"] for r in views.agent_rows("a")}["b"] == "  b"
    assert views.task_rows(agent) == [] and views.children_text(agent) == "no child agents"
    assert views.task_output(agent, "task_nope") == "no task task_nope"


def test_help_lists_every_slash_command():
    text = help_text()
    for command in ("/display", "/transcript", "/tasks", "/agents", "/agent NAME", "/quit"):
        assert command in text


def test_the_working_line_shows_progress_and_tools_never_trace_internals(agent):
    conv = Conversation(agent)
    a = Agent(agent)
    a.event("message_admitted", message_id="m1", message_kind="operator_prompt")
    a.event("assistant_round_recorded", text_preview="", tool_names=["ExecCommand"])
    a.event("tool_executed", tool_name="ExecCommand", status="success", duration_ms=5)
    assert [activity(e) for e in conv.poll()] == [
        None,
        "Model requested tools: ExecCommand",
        "ExecCommand: success in 5 ms",
    ]


def test_every_row_reaches_the_screen_without_terminal_controls(agent):
    a = Agent(agent)
    a.event("odd\x1b]0;t\x07kind", note="x\x1b[2J")
    a.brief("failure", "bad \x1b[31m news")
    conv = Conversation(agent)
    rows = [str(render(e, "debug")) for e in conv.entries if visible(e, "debug")]
    assert rows and not any(c in row for row in rows for c in "\x1b\x07")
    assert any("odd\\u001b]0;t\\u0007kind" in row for row in rows)

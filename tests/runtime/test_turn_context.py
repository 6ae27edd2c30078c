"""holon.runtime.turn.context: model chain, execution root, render policy, the provider request."""

from __future__ import annotations

import json

from scenario_helpers import T0, set_now

from holon.agent import admission, budget, triggers, workitems
from holon.agent.handle import Agent
from holon.model.conversation import AssistantItem, ToolResultItem, UserItem
from holon.model.messages import MessageEnvelope
from holon.patch.guidance import prompt_guidance
from holon.runtime.tick import tick
from holon.runtime.turn import context
from holon.runtime.turn.state import TurnState, begin
from holon.store import jsonl


def _prompt(home, text: str) -> dict:
    return admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def test_model_chain_order_and_absence(agent, monkeypatch):
    a = Agent(agent)
    assert context.model_chain(a) is None
    monkeypatch.setenv("HOLON_MODEL", "openai/x")
    monkeypatch.setenv("HOLON_FALLBACK_MODELS", "anthropic/y, openai/x ,scripted/z")
    assert context.model_chain(a) == ["openai/x", "anthropic/y", "scripted/z"]
    budget.set_override(a, "anthropic/override")
    assert context.model_chain(a)[0] == "anthropic/override"
    assert context.model_chain(a, "scripted/cli")[0] == "scripted/cli"


def test_execution_root_is_the_home_unless_a_workspace_is_active(agent, tmp_path):
    a = Agent(agent)
    assert context.execution_root(a) == (agent.root, agent.root)
    ws = tmp_path / "ws"
    ws.mkdir()
    agent.workspace_json.write_text(json.dumps({"execution_root": str(ws)}))
    assert context.execution_root(a) == (agent.root, agent.root)  # agent_home still active
    a.update_state(lambda s: setattr(s, "active_workspace_id", "ws_1"))
    assert context.execution_root(a) == (ws, ws)
    a.update_state(lambda s: setattr(s, "cwd", str(ws / "sub")))
    assert context.execution_root(a) == (ws, ws / "sub")


def test_render_policy_is_clamped(monkeypatch):
    policy = context.render_policy()
    assert (policy.default_tokens, policy.max_tokens) == (8000, 64000)
    monkeypatch.setenv("HOLON_MAX_TOOL_OUTPUT_TOKENS", "100")
    policy = context.render_policy()
    assert (policy.default_tokens, policy.max_tokens) == (100, 100)
    monkeypatch.setenv("HOLON_MAX_TOOL_OUTPUT_TOKENS", "999999")
    monkeypatch.setenv("HOLON_DEFAULT_TOOL_OUTPUT_TOKENS", "0")
    policy = context.render_policy()
    assert (policy.default_tokens, policy.max_tokens) == (1, 64000)


def test_tool_context_carries_the_turn(agent):
    ctx = context.tool_context(
        Agent(agent), turn_id="turn_1", call_id="c1", message_id="msg_1", round_text="text"
    )
    assert (ctx.turn_id, ctx.tool_call_id, ctx.message_id, ctx.round_text) == (
        "turn_1",
        "c1",
        "msg_1",
        "text",
    )
    assert ctx.execution_root == agent.root and ctx.cwd == agent.root and ctx.home is agent


def test_apply_patch_guidance_follows_the_provider():
    assert context.apply_patch_guidance("openai/gpt") == prompt_guidance("freeform")
    assert context.apply_patch_guidance("openai-codex/gpt") == prompt_guidance("freeform")
    assert context.apply_patch_guidance("anthropic/claude") == prompt_guidance("json")
    assert context.apply_patch_guidance("scripted/x") == prompt_guidance("json")


def test_request_keeps_the_operator_message_and_the_calls(agent, script, monkeypatch):
    set_now(monkeypatch, T0)
    _prompt(agent, "list my work")
    tick(
        agent,
        model=script(
            {"text": "Looking.", "tool_calls": [{"name": "ListWorkItems", "arguments": {}}]},
            {"text": "Nothing."},
        ),
    )
    request = context.build_request(Agent(agent), "anthropic/claude").request
    items = request.conversation
    assert [type(i) for i in items] == [
        UserItem,
        UserItem,
        AssistantItem,
        ToolResultItem,
        AssistantItem,
    ]
    assert items[0].text == (
        "[operator_prompt · origin operator · operator_instruction · "
        "trust trusted_operator]\nlist my work"
    )
    lines = items[1].text.splitlines()  # the turn context, written when the turn began
    assert lines[0] == "# Turn context"
    assert "Current time: 2027-01-15T08:00:00.000Z" in lines and "Status: awake_running" in lines
    assert f"Execution root: {agent.root}" in lines
    assert not any(line.startswith("External trigger") for line in lines)
    assert items[2].tool_calls[0].name == "ListWorkItems"
    assert items[3].tool_name == "ListWorkItems" and not items[3].is_error
    assert request.model_ref == "anthropic/claude" and request.max_output_tokens == 8192
    names = {t.name for t in request.tools}
    assert {"Sleep", "CompleteWorkItem", "ApplyPatch"} <= names
    system = "\n".join(b.text for b in request.frame.system_blocks)
    assert prompt_guidance("json") in system
    assert f"# Environment\nAgent: a\nAgent home: {agent.root}" in system
    assert "Current time" not in system  # nothing turn-scoped in the cached part


def test_request_context_names_an_active_trigger_and_the_work_queue(agent, monkeypatch):
    monkeypatch.setenv("HOLON_MAX_OUTPUT_TOKENS", "1234")
    descriptor, token = triggers.rotate(agent)
    a = Agent(agent)
    workitems.append(a, workitems.new_record("a", "Ship it"))
    request = context.build_request(a, "openai/gpt").request
    msg = MessageEnvelope.model_validate(_prompt(agent, "go"))
    ts = begin(a, msg)
    context.record_turn_context(a, ts)
    text = ts.entries[-1]["data"]["text"]
    assert f"External trigger: {descriptor['external_trigger_id']} active" in text
    assert token not in text
    assert "# Work queue" in text and "Ship it" in text
    assert prompt_guidance("freeform") in "\n".join(b.text for b in request.frame.system_blocks)
    assert request.max_output_tokens == 1234
    triggers.revoke(agent)
    ts2 = begin(a, MessageEnvelope.model_validate(_prompt(agent, "again")))
    context.record_turn_context(a, ts2)
    assert "External trigger" not in ts2.entries[-1]["data"]["text"]


def test_stale_reminder_is_sent_but_never_persisted(agent, monkeypatch):
    monkeypatch.setenv("HOLON_WORK_ITEM_STALE_REMINDER_ROUNDS", "2")
    a = Agent(agent)
    rec = workitems.append(a, workitems.new_record("a", "Long job"))
    a.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
    msg = MessageEnvelope.model_validate(_prompt(agent, "keep going"))
    ts = begin(a, msg)
    ts.rounds = [{"text": ""}, {"text": ""}]
    request = context.build_request(a, "anthropic/claude", ts).request
    last = request.conversation[-1]
    assert isinstance(last, UserItem) and last.text.startswith("[runtime reminder] 2 provider")
    assert "Long job" in last.text
    assert "runtime reminder" not in agent.transcript.read_text()
    (event,) = [
        e["data"] for e in jsonl.read(agent.events) if e["kind"] == "work_item_progress_reminder"
    ]
    assert event == {"turn_id": ts.turn_id, "rounds": 2}
    fresh = TurnState(turn_id="turn_y", message=msg)
    assert not any(
        "runtime reminder" in getattr(i, "text", "")
        for i in context.build_request(a, "anthropic/claude", fresh).request.conversation
    )

"""`holon enqueue`: provenance derived from --kind, bodies from text/JSON/@file/stdin, bad input
leaves neither the queue nor the message ledger touched."""

from __future__ import annotations

import pytest
from cmd_checks import fails, invoke, ok, ok_json, usage_error

from holon.cli.enqueue import enqueue_cmd
from holon.errors import InvalidInput
from holon.store import jsonl


def nothing_admitted(agent) -> bool:
    return agent.queue.depth() == 0 and list(jsonl.read(agent.messages)) == []


@pytest.mark.parametrize(
    "kind, trust, authority, surface",
    [
        ("channel_event", "untrusted_external", "external_evidence", "http_public_enqueue"),
        ("webhook_event", "trusted_integration", "integration_signal", "http_webhook"),
        ("timer_tick", "trusted_system", "runtime_instruction", "timer_scheduler"),
        ("system_tick", "trusted_system", "runtime_instruction", "runtime_system"),
    ],
)
def test_provenance_follows_the_kind(agent, kind, trust, authority, surface):
    env = ok_json(enqueue_cmd, "a", "--kind", kind, "--text", "hello", "--json")
    assert (env["kind"], env["trust"], env["authority_class"]) == (kind, trust, authority)
    assert env["delivery_surface"] == surface and env["admission_context"] == "local_process"
    assert env["body"] == {"type": "text", "text": "hello"} and env["priority"] == "normal"
    assert agent.queue.depth() == 1
    assert [m["id"] for m in jsonl.read(agent.messages)] == [env["id"]]


def test_origin_fields_and_priority(agent):
    env = ok_json(
        enqueue_cmd,
        "a",
        "--kind",
        "channel_event",
        "--source",
        "slack",
        "--sender",
        "u1",
        "--priority",
        "interject",
        "--text",
        "hi",
        "--json",
    )
    assert env["origin"] == {"kind": "channel", "channel_id": "slack", "sender_id": "u1"}
    assert env["priority"] == "interject"
    env = ok_json(
        enqueue_cmd,
        "a",
        "--kind",
        "webhook_event",
        "--source",
        "gh",
        "--event-type",
        "push",
        "--json-body",
        '{"ref": "main"}',
        "--json",
    )
    assert env["origin"] == {"kind": "webhook", "source": "gh", "event_type": "push"}
    assert env["body"] == {"type": "json", "value": {"ref": "main"}}


def test_plain_output_is_the_message_id(agent):
    out = ok(enqueue_cmd, "a", "--kind", "system_tick", "--text", "x").stdout.strip()
    assert out.startswith("msg_") and agent.queue.depth() == 1


def test_bodies_from_stdin_and_file(agent, tmp_path):
    env = ok_json(
        enqueue_cmd, "a", "--kind", "system_tick", "--text", "-", "--json", input="from stdin\n"
    )
    assert env["body"]["text"] == "from stdin\n"
    env = ok_json(
        enqueue_cmd, "a", "--kind", "system_tick", "--json-body", "-", "--json", input="[1, 2]"
    )
    assert env["body"]["value"] == [1, 2]
    body = tmp_path / "body.json"
    body.write_text('{"é": true}', encoding="utf-8")
    env = ok_json(enqueue_cmd, "a", "--kind", "system_tick", "--json-body", f"@{body}", "--json")
    assert env["body"]["value"] == {"é": True}
    assert agent.queue.depth() == 3


@pytest.mark.parametrize(
    "args, kind",
    [
        (["--json-body", "{bad"], "invalid_json"),
        (["--json-body", "@/no/such/file.json"], "invalid_json"),
        (["--text", "x", "--json-body", "{}"], "invalid_body"),
        ([], "invalid_body"),
    ],
)
def test_bad_bodies_exit_2_and_admit_nothing(agent, args, kind):
    fails("enqueue", "a", "--kind", "system_tick", *args, code=2, kind=kind)
    assert nothing_admitted(agent)


def test_invalid_utf8_on_stdin(agent):
    with pytest.raises(InvalidInput) as info:
        invoke(enqueue_cmd, "a", "--kind", "system_tick", "--text", "-", input=b"\xff\xfe")
    assert info.value.kind == "invalid_utf8" and info.value.exit_code == 2
    assert nothing_admitted(agent)


def test_oversize_body_is_refused(agent, monkeypatch):
    monkeypatch.setenv("HOLON_MAX_MESSAGE_BYTES", "64")
    fails(
        "enqueue", "a", "--kind", "system_tick", "--text", "x" * 100, code=2, kind="oversize_body"
    )
    assert nothing_admitted(agent)


def test_stopped_agent_exits_3_and_unknown_agent_2(agent):
    from holon.agent import control

    control.stop(agent)
    fails("enqueue", "a", "--kind", "channel_event", "--text", "x", code=3, kind="agent_stopped")
    assert nothing_admitted(agent)
    fails(
        "enqueue", "nobody", "--kind", "channel_event", "--text", "x", code=2, kind="unknown_agent"
    )


def test_kind_and_priority_are_choices(agent):
    usage_error(enqueue_cmd, "a", "--kind", "operator_prompt", "--text", "x")
    usage_error(enqueue_cmd, "a", "--kind", "system_tick", "--priority", "urgent", "--text", "x")
    usage_error(enqueue_cmd, "a", "--text", "x")
    assert nothing_admitted(agent)

"""holon.providers.scripted: one round per served line, a cursor persisted in the caller's cursor
file, error lines, script_exhausted, and script paths resolved against the cwd, then the home."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from provider_kits import FRAME

from holon.model.conversation import ProviderFailure, ProviderRequest, UserItem
from holon.providers.endpoints import resolve_script
from holon.providers.resolve import make_provider
from holon.providers.runner import run_round
from holon.providers.scripted import Exhausted, ScriptedProvider

REQUEST = ProviderRequest(model_ref="scripted/x", frame=FRAME, conversation=[UserItem(text="hi")])


def write(path: Path, *lines) -> Path:
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def failure(provider) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as info:
        provider.complete(REQUEST)
    return info.value


def test_cursor_advances_per_line_and_persists(tmp_path):
    script = write(tmp_path / "s.jsonl", {"text": "one"}, {"text": "two"}, {"text": "three"})
    cursor = tmp_path / "cursor.json"
    first = ScriptedProvider(script, cursor)
    assert first.complete(REQUEST).text == "one"
    assert json.loads(cursor.read_text()) == {os.fspath(script): 1}
    assert ScriptedProvider(script, cursor).complete(REQUEST).text == "two"  # a later process
    assert first.complete(REQUEST).response_id == "scripted-3"
    assert json.loads(cursor.read_text()) == {os.fspath(script): 3}


def test_cursor_is_kept_per_script(tmp_path):
    a = write(tmp_path / "a.jsonl", {"text": "a1"}, {"text": "a2"})
    b = write(tmp_path / "b.jsonl", {"text": "b1"})
    cursor = tmp_path / "cursor.json"
    assert ScriptedProvider(a, cursor).complete(REQUEST).text == "a1"
    assert ScriptedProvider(b, cursor).complete(REQUEST).text == "b1"
    assert ScriptedProvider(a, cursor).complete(REQUEST).text == "a2"
    assert json.loads(cursor.read_text()) == {os.fspath(a): 2, os.fspath(b): 1}


def test_without_a_cursor_file_the_position_is_in_memory(tmp_path):
    (tmp_path / "w").mkdir()
    script = write(tmp_path / "w" / "s.jsonl", {"text": "one"}, {"text": "two"})
    provider = ScriptedProvider(script, None)
    assert [provider.complete(REQUEST).text for _ in range(2)] == ["one", "two"]
    assert ScriptedProvider(script, None).complete(REQUEST).text == "one"
    assert [p.name for p in (tmp_path / "w").iterdir()] == ["s.jsonl"]


def test_blank_and_comment_lines_are_not_rounds(tmp_path):
    script = write(
        tmp_path / "s.jsonl",
        "# a comment",
        "",
        {"text": "one"},
        "   ",
        "  # indented comment",
        {"text": "two"},
    )
    provider = ScriptedProvider(script, tmp_path / "c.json")
    assert [provider.complete(REQUEST).text for _ in range(2)] == ["one", "two"]
    assert failure(provider).kind == "script_exhausted"


def test_exhausted_script(tmp_path):
    script = write(tmp_path / "s.jsonl", {"text": "only"})
    cursor = tmp_path / "c.json"
    ScriptedProvider(script, cursor).complete(REQUEST)
    err = failure(ScriptedProvider(script, cursor))
    assert isinstance(err, Exhausted) and err.kind == "script_exhausted"
    assert err.category == "runtime" and not err.retryable
    assert str(script) in err.message and "(1 rounds served)" in err.message
    assert json.loads(cursor.read_text()) == {os.fspath(script): 1}  # not advanced further


@pytest.mark.parametrize(
    "error, kind, status",
    [
        ({"status": 429}, "rate_limited", 429),
        ({"status": 401}, "auth", 401),
        ({"status": 403}, "auth", 403),
        ({"status": 408}, "timeout", 408),
        ({"status": 503}, "server_error", 503),
        ({"status": 400}, "client_error", 400),
        ({"kind": "context_length_exceeded"}, "context_length_exceeded", None),
        ({"status": 500, "kind": "connection"}, "connection", 500),
        ({}, "client_error", None),
    ],
)
def test_error_lines(tmp_path, error, kind, status):
    script = write(tmp_path / "s.jsonl", {"error": error}, {"text": "after"})
    provider = ScriptedProvider(script, tmp_path / "c.json")
    err = failure(provider)
    assert (err.kind, err.status) == (kind, status)
    assert err.message == error.get("message", f"scripted failure ({kind})")
    assert provider.complete(REQUEST).text == "after"  # an error line is spent like a request


def test_error_line_message_and_retry_after(tmp_path):
    script = write(
        tmp_path / "s.jsonl",
        {"error": {"status": 429, "message": "slow down", "retry_after_s": 2.5}},
    )
    err = failure(ScriptedProvider(script, None))
    assert err.message == "slow down" and err.retry_after_s == 2.5 and err.retryable


@pytest.mark.parametrize(
    "line, what", [("{not json", "is not JSON"), ("[1, 2]", "is not an object")]
)
def test_malformed_lines(tmp_path, line, what):
    script = write(tmp_path / "s.jsonl", line, {"text": "next"})
    provider = ScriptedProvider(script, tmp_path / "c.json")
    err = failure(provider)
    assert err.kind == "invalid_response" and err.category == "protocol"
    assert f"line 1 of {script} {what}" in err.message
    assert provider.complete(REQUEST).text == "next"


def test_missing_script(tmp_path):
    err = failure(ScriptedProvider(tmp_path / "gone.jsonl", tmp_path / "c.json"))
    assert err.kind == "invalid_response" and "script not found" in err.message
    assert not (tmp_path / "c.json").exists()


def test_round_fields(tmp_path):
    script = write(
        tmp_path / "s.jsonl",
        {
            "text": "Looking.",
            "tool_calls": [
                {"name": "ExecCommand", "arguments": {"cmd": "ls"}},
                {"id": "mine", "name": "ApplyPatch", "arguments": "*** raw", "kind": "custom"},
                {"name": "ExecCommand", "raw_arguments": '{"cmd": '},
            ],
            "usage": {
                "input_tokens": 12,
                "output_tokens": 3,
                "cache_read_input_tokens": 10,
                "cache_creation_input_tokens": 2,
            },
        },
        {"text": "cut", "stop_reason": "max_output_tokens"},
        {},
    )
    provider = ScriptedProvider(script, None)
    first = provider.complete(REQUEST)
    assert first.text == "Looking." and first.stop_reason == "tool_use"
    assert first.response_id == "scripted-1"
    c0, c1, c2 = first.tool_calls
    assert (c0.id, c0.name, c0.arguments, c0.raw_arguments) == (
        "call_s0_0",
        "ExecCommand",
        {"cmd": "ls"},
        None,
    )
    assert (c1.id, c1.kind, c1.arguments, c1.raw_arguments) == ("mine", "custom", None, "*** raw")
    assert (c2.id, c2.arguments, c2.raw_arguments) == ("call_s0_2", None, '{"cmd": ')
    u = first.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (12, 3, 15)
    assert (u.cache_read_input_tokens, u.cache_creation_input_tokens) == (10, 2)
    second = provider.complete(REQUEST)
    assert (second.text, second.stop_reason, second.tool_calls) == ("cut", "max_output_tokens", [])
    empty = provider.complete(REQUEST)
    assert (empty.text, empty.stop_reason, empty.usage.total_tokens) == ("", "end_turn", 0)


def test_resolve_script(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert resolve_script(str(tmp_path / "abs.jsonl"), home) == tmp_path / "abs.jsonl"
    assert resolve_script("s.jsonl", home) == home / "s.jsonl"  # not in the cwd: the home
    (cwd / "s.jsonl").write_text("")
    assert resolve_script("s.jsonl", home) == cwd / "s.jsonl"  # the cwd first
    assert resolve_script("other.jsonl", None) == cwd / "other.jsonl"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_script("~/x.jsonl", home) == tmp_path / "x.jsonl"


def test_make_provider_takes_home_and_cursor_from_the_caller(tmp_path, monkeypatch):
    home = tmp_path / "agent"
    home.mkdir()
    write(home / "s.jsonl", {"text": "from the home"})
    monkeypatch.chdir(tmp_path)
    cursor = tmp_path / "state" / "cursor.json"
    cursor.parent.mkdir()
    provider = make_provider("scripted/s.jsonl", home=home, cursor=cursor)
    assert isinstance(provider, ScriptedProvider) and provider.name == "scripted"
    assert provider.script == home / "s.jsonl" and provider.cursor_file == cursor
    assert provider.complete(REQUEST).text == "from the home"
    assert json.loads(cursor.read_text()) == {os.fspath(home / "s.jsonl"): 1}


def test_runner_retries_a_scripted_rate_limit(tmp_path):
    script = write(
        tmp_path / "s.jsonl",
        {"error": {"status": 429, "retry_after_s": 0.01}},
        {"text": "recovered"},
    )
    ref = f"scripted/{script}"
    cursor = tmp_path / "c.json"
    sleeps: list[float] = []
    request = REQUEST.model_copy(update={"model_ref": ref})
    response, timeline = run_round(
        request,
        [ref],
        sleep=sleeps.append,
        make=lambda r: make_provider(r, home=tmp_path, cursor=cursor),
    )
    assert response.text == "recovered"
    assert [a["outcome"] for a in timeline["attempts"]][-1] == "succeeded"
    assert len(timeline["attempts"]) == 2 and len(sleeps) == 1

"""Any malformed scripted line fails the turn as `invalid_response`; a corrupt cursor resets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.model.conversation import ProviderFailure, ProviderRequest
from holon.providers.scripted import ScriptedProvider

BAD_LINES = [
    "{not json",
    "[1, 2]",
    '"text"',
    "null",
    '{"text": 5}',
    '{"text": ["a"]}',
    '{"text": "x", "tool_calls": "ls"}',
    '{"tool_calls": [5]}',
    '{"tool_calls": [{"name": 5}]}',
    '{"tool_calls": [{"name": "ExecCommand", "arguments": [1]}]}',
    '{"tool_calls": [{"name": "ExecCommand", "input": {}}]}',
    '{"tool_calls": [{"name": "ExecCommand", "kind": "magic"}]}',
    '{"tool_calls": [{"name": "ExecCommand", "id": 7}]}',
    '{"usage": {"input_tokens": 1e400}}',
    '{"usage": {"input_tokens": NaN}}',
    '{"usage": {"input_tokens": -1}}',
    '{"usage": {"input_tokens": true}}',
    '{"usage": {"input_tokens": 99999999999999999999}}',
    '{"usage": "lots"}',
    '{"stop_reason": "because"}',
    '{"error": "boom"}',
    '{"error": {"status": "500"}}',
    '{"error": {"status": 99999}}',
    '{"error": {"retry_after_s": NaN}}',
    '{"error": {"message": 5}}',
    '{"text": "' + "[" * 10 + '", "tool_calls": [' + "[" * 100 + "]" * 100 + "]}",
]


def _provider(tmp_path: Path, line: str) -> ScriptedProvider:
    script = tmp_path / "s.jsonl"
    script.write_text(line + "\n")
    return ScriptedProvider(script, tmp_path / "cursor.json")


@pytest.mark.parametrize("line", BAD_LINES, ids=lambda s: s[:40])
def test_a_malformed_line_is_an_invalid_response(tmp_path: Path, line: str) -> None:
    with pytest.raises(ProviderFailure) as exc:
        _provider(tmp_path, line).complete(ProviderRequest.model_construct())
    assert exc.value.kind == "invalid_response", exc.value.message
    assert "\n" not in exc.value.message


@pytest.mark.parametrize(
    "cursor", [b"garbage", b"[]", b'{"x": "y"}', b'{"x": -1}', b"\xff", b"[" * 100_000]
)
def test_a_corrupt_cursor_restarts_the_script(tmp_path: Path, cursor: bytes) -> None:
    provider = _provider(tmp_path, json.dumps({"text": "first"}))
    (tmp_path / "cursor.json").write_bytes(cursor)
    assert provider.complete(ProviderRequest.model_construct()).text == "first"
    assert (tmp_path / "cursor.json.corrupt").exists()
    with pytest.raises(ProviderFailure) as exc:
        provider.complete(ProviderRequest.model_construct())
    assert exc.value.kind == "script_exhausted"


def test_a_malformed_line_fails_the_turn_not_the_tick(holon_env: Path, tmp_path: Path) -> None:
    from helpers import run

    script = tmp_path / "bad.jsonl"
    script.write_text("\n".join(BAD_LINES) + "\n")
    assert run("init", "--agent-id", "a").returncode == 0
    assert run("model", "set", "a", f"scripted/{script}").returncode == 0
    for i in range(3):
        assert run("prompt", "a", f"m{i}", "--no-wait").returncode == 0
    proc = run("tick", "a", "--until-idle")
    assert "internal_error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1 and proc.stdout.count(" failed") == 3, proc.stdout
    events = run("events", "a", "--jsonl").stdout
    assert events.count('"failure_kind":"invalid_response"') >= 3  # one per failed turn (or more)

"""A mutation tool call from a response cut off at max_output_tokens is not run."""

from __future__ import annotations

import json

from helpers import holon, init_agent, transcript, write_script


def test_truncated_exec_command_is_not_run(tmp_path):
    home = init_agent()
    marker = home / "ran.txt"
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"name": "ExecCommand", "arguments": {"cmd": f"touch {marker}", "login": False}}
                ],
                "stop_reason": "max_output_tokens",
            },
            {"text": "ok"},
        ],
    )
    holon("prompt", "a", "go", "--model", model)
    assert not marker.exists()
    assert "truncated_mutation_tool_call" in json.dumps(transcript(home))

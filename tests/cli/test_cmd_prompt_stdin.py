"""Piped stdin joins the prompt, as llm reads it: stdin first, then TEXT on a line of its own,
for `holon prompt` and `holon run`; `-` reads stdin alone; no stdin leaves TEXT as it is."""

from __future__ import annotations

import json

import pytest
from helpers import run, subprocess_env, transcript

from holon.home.layout import Home


def _prompts(root) -> list[str]:
    return [
        e["data"]["text"]
        for e in transcript(root)
        if e["kind"] == "message" and e["data"].get("message_kind") == "operator_prompt"
    ]


@pytest.mark.parametrize(
    "stdin, args, expected",
    [
        ("data\n", ("explain this",), "data\nexplain this"),
        ("no newline", ("explain",), "no newline\nexplain"),
        ("", ("only text",), "only text"),
        (None, ("only text",), "only text"),  # /dev/null is not read
        ("from stdin\n", ("-",), "from stdin\n"),
        ("from stdin", (), "from stdin"),
    ],
)
def test_prompt_reads_piped_stdin_before_text(agent, script, stdin, args, expected):
    model = script({"text": "ok"})
    r = run("prompt", "a", *args, "--model", model, input=stdin, env=subprocess_env())
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    assert _prompts(agent.root) == [expected]


def test_run_reads_piped_stdin_before_text(script, tmp_path):
    model = script({"text": "reviewed"})
    r = run("run", "review this", "--model", model, "--keep", "--json", input="diff --git\n")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["final_text"] == "reviewed"
    assert _prompts(Home(doc["home"]).root) == ["diff --git\nreview this"]

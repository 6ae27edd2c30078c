"""`holon prompt`, `holon run` and `holon enqueue` refuse at admission what a turn would surely
fail on (empty text, no model, a malformed model ref, an unknown provider, a missing key or script):
exit 2, a stable kind and a hint, and nothing admitted."""

from __future__ import annotations

import os

import pytest
from cmd_checks import fails
from helpers import run

from holon.agent import budget
from holon.agent.handle import Agent


def nothing_admitted(agent) -> None:
    for sub in ("new", "cur", "tmp", "dead"):
        assert os.listdir(agent.queue.root / sub) == [], sub
    assert not agent.messages.exists() or agent.messages.read_text() == ""


@pytest.mark.parametrize(
    "args, stdin, kind, hint",
    [
        (["prompt", "a", ""], None, "empty_prompt", "`-` to read it from stdin"),
        (["prompt", "a", " \n\t", "--model", "scripted/x"], None, "empty_prompt", "argument"),
        (["prompt", "a", "-", "--no-wait"], "  \n", "empty_prompt", "argument"),
        (["enqueue", "a", "--kind", "webhook_event", "--text", ""], None, "empty_prompt", "--text"),
        (["prompt", "a", "hi", "--model", "gpt-4o"], None, "invalid_model_ref", "provider/model"),
        (["prompt", "a", "hi", "--model", "nosuch/m"], None, "unknown_provider", "[providers."),
        (["prompt", "a", "hi", "--no-wait", "--model", "openai/gpt-4o"], None,
         "missing_credentials", "OPENAI_API_KEY"),
        (["prompt", "a", "hi", "--model", "scripted/no-such.jsonl"], None, "missing_script",
         "JSONL script"),
        (["prompt", "a", "hi", "--no-wait"], None, "no_model_configured", "holon model set a"),
    ],
)  # fmt: skip
def test_refused_before_anything_is_admitted(agent, args, stdin, kind, hint):
    _, err = fails(*args, code=2, kind=kind, stdin=stdin)
    assert hint in err
    nothing_admitted(agent)


def test_no_model_hint_names_every_way_to_set_one(agent):
    _, err = fails("prompt", "a", "hi", code=2, kind="no_model_configured")
    assert "--model" in err and "holon model set a" in err and "model = " in err
    assert "config.toml" in err


def test_the_agents_override_and_the_default_are_checked_too(agent, monkeypatch):
    budget.set_override(Agent(agent), "gpt-4o")
    fails("prompt", "a", "hi", "--no-wait", code=2, kind="invalid_model_ref")
    budget.set_override(Agent(agent), None)
    monkeypatch.setenv("HOLON_MODEL", "anthropic/claude-sonnet-4-5")
    _, err = fails("prompt", "a", "hi", code=2, kind="missing_credentials")
    assert "ANTHROPIC_API_KEY" in err
    nothing_admitted(agent)


def test_through_the_real_entry_point(agent):
    r = run("prompt", "a", "hi", "--model", "gpt-4o")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "holon: invalid_model_ref: 'gpt-4o' is not a model ref: it must be provider/model with "
        "both parts",
        "hint: use provider/model, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5 or scripted/PATH",
    ]
    r = run("prompt", "a", "   ")
    assert r.returncode == 2 and r.stderr.startswith("holon: empty_prompt: ")
    nothing_admitted(agent)


def test_run_refuses_and_keeps_no_temporary_agent(holon_env, tmp_path, monkeypatch):
    import tempfile

    base = tmp_path / "tmp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    fails("run", "hi", "--model", "gpt-4o", code=2, kind="invalid_model_ref")
    fails("run", " ", "--model", "scripted/x", code=2, kind="empty_prompt")
    assert os.listdir(base) == []

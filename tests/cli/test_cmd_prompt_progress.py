"""`holon prompt -v` / `--level verbose|debug`: this turn's operator records on stderr while it
waits, never an earlier turn's; the result stays on stdout."""

from __future__ import annotations

from helpers import run


def test_verbose_prints_this_turns_progress_on_stderr(agent, script):
    first = script(
        {
            "text": "Looking around.",
            "tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": "true"}}],
        },
        {"text": "First answer."},
        name="one.jsonl",
    )
    proc = run("prompt", "a", "look", "--model", first, "-v")
    assert proc.returncode == 0 and proc.stdout == "First answer.\n", proc.stderr
    err = proc.stderr.splitlines()
    assert any(x.endswith("[progress] Assistant progress: Looking around.") for x in err), err
    assert any("[trace] Tool: ExecCommand: success" in x for x in err), err
    assert not any("First answer." in x and "turn_result" in x for x in err)  # stdout has it
    second = script({"text": "Second answer."}, name="two.jsonl")
    proc = run("prompt", "a", "again", "--model", second, "--level", "verbose")
    assert proc.returncode == 0 and proc.stdout == "Second answer.\n"
    assert "Looking around." not in proc.stderr  # a new message starts with no preview
    assert "Assistant progress: Second answer." in proc.stderr


def test_debug_adds_trace_and_info_stays_quiet(agent, script):
    model = script({"text": "Hi."}, {"text": "Again."})
    quiet = run("prompt", "a", "hi", "--model", model)
    assert quiet.returncode == 0 and quiet.stderr == ""
    debug = run("prompt", "a", "hi", "--model", model, "--level", "debug")
    assert "[trace] Message: operator_prompt" in debug.stderr
    assert "Turn completed after 1 round(s)" in debug.stderr

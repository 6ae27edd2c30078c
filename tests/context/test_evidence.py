"""holon.context.evidence: commands, files and verification read from a turn's rounds."""

from __future__ import annotations

import pytest

from holon.context import evidence


def _call(cid, name, **arguments):
    return {"id": cid, "name": name, "arguments": arguments}


def _exec(exit_status, disposition="completed"):
    return {
        "envelope": {
            "status": "success",
            "result": {"disposition": disposition, "exit_status": exit_status},
        }
    }


def test_commands_carry_their_exit_status():
    rounds = [
        {"text": "", "tool_calls": [_call("c1", "ExecCommand", cmd="ls -la")]},
        {
            "text": "",
            "tool_calls": [
                _call("c1", "ExecCommand", cmd="false"),  # ids repeat across rounds
                _call("c2", "ExecCommand", cmd="sleep 100"),
                _call("c3", "ExecCommand", cmd="never answered"),
            ],
        },
        {"text": "all done", "tool_calls": []},
    ]
    promoted = {"envelope": {"status": "success", "result": {"disposition": "promoted_to_task"}}}
    results = {"0:c1": _exec(0), "1:c1": _exec(1), "1:c2": promoted}
    ev = evidence.turn_evidence(
        {"text": "run things", "message_kind": "operator_prompt"}, rounds, results
    )
    assert ev["commands"] == [
        {"cmd": "ls -la", "exit": 0},
        {"cmd": "false", "exit": 1},
        {"cmd": "sleep 100", "exit": "promoted_to_task"},
        {"cmd": "never answered", "exit": None},
    ]
    assert ev["tools"] == {"ExecCommand": 4}
    assert ev["rounds"] == 3
    assert ev["asked"] == "run things" and ev["kind"] == "operator_prompt"
    assert ev["replied"] == "all done"
    assert ev["verification"] == [] and ev["files"] == []
    assert [evidence.command_line(c) for c in ev["commands"]] == [
        "`ls -la` → exit 0",
        "`false` → exit 1",
        "`sleep 100` → promoted_to_task",
        "`never answered` → None",
    ]


def test_batch_commands_and_long_commands():
    long_cmd = "echo " + "x" * 500
    rounds = [
        {
            "text": "",
            "tool_calls": [
                _call("b1", "ExecCommandBatch", items=[]),
                _call("c1", "ExecCommand", cmd=long_cmd),
                _call("c2", "ExecCommand", cmd=["not", "a", "string"]),
            ],
        }
    ]
    batch = {
        "envelope": {
            "status": "success",
            "result": {
                "items": [
                    {"cmd": "make build", "exit_status": 0},
                    {"cmd": "pytest -q", "exit_status": 2},
                    "garbage",
                    {"no_cmd": True},
                ]
            },
        }
    }
    ev = evidence.turn_evidence({"text": "x"}, rounds, {"0:b1": batch, "0:c1": _exec(0)})
    assert [c["cmd"] for c in ev["commands"][:2]] == ["make build", "pytest -q"]
    assert [c["exit"] for c in ev["commands"]] == [0, 2, 0]
    assert len(ev["commands"][2]["cmd"]) == evidence.CMD_CHARS
    assert ev["commands"][2]["cmd"].endswith("…")
    assert ev["verification"] == ev["commands"][:2]


def test_apply_patch_files_only_when_it_succeeded():
    rounds = [
        {
            "text": "",
            "tool_calls": [
                _call("p1", "ApplyPatch", patch="..."),
                _call("p2", "ApplyPatch", patch="..."),
                _call("p3", "ApplyPatch", patch="..."),
            ],
        }
    ]
    ok = {
        "envelope": {
            "status": "success",
            "result": {
                "modified": ["src/a.py"],
                "added": ["src/new.py"],
                "deleted": ["old.txt"],
                "renamed": [{"from": "x.py", "to": "y.py"}],
            },
        }
    }
    again = {"envelope": {"status": "success", "result": {"modified": ["src/a.py", "src/b.py"]}}}
    failed = {"envelope": {"status": "error", "result": {"modified": ["src/failed.py"]}}}
    ev = evidence.turn_evidence(
        {"text": "patch"}, rounds, {"0:p1": ok, "0:p2": failed, "0:p3": again}
    )
    assert ev["files"] == ["src/new.py", "src/a.py", "old.txt", "y.py", "src/b.py"]
    assert ev["tools"] == {"ApplyPatch": 3}
    assert ev["commands"] == []


@pytest.mark.parametrize(
    "cmd, verifies",
    [
        ("pytest -q tests/", True),
        (".venv/bin/pytest -x", True),
        ("cd repo && make", True),
        ("cargo test --all", True),
        ("go vet ./...", True),
        ("npm run lint", True),
        ("(ruff check .)", True),
        ("uv run mypy holon", True),
        ("ls -la", False),
        ("cat README.md", False),
        ("git checkout main", False),
        ("echo pytesting", False),
        ("cargo fmt", False),
    ],
)
def test_verification_is_detected_from_the_command(cmd, verifies):
    rounds = [{"text": "", "tool_calls": [_call("c1", "ExecCommand", cmd=cmd)]}]
    ev = evidence.turn_evidence({"text": ""}, rounds, {"0:c1": _exec(0)})
    assert bool(ev["verification"]) is verifies


def test_excerpt_keeps_the_head_and_the_tail():
    assert evidence.excerpt("  short\n text  ") == "short text"
    text = "START " + "middle " * 200 + "END"
    out = evidence.excerpt(text, 50, 20)
    assert out.startswith("START middle") and out.endswith("middle END")
    assert " … " in out
    assert len(out) <= 50 + 20 + 3
    fits = "y" * (50 + 20 + 3)
    assert evidence.excerpt(fits, 50, 20) == fits  # no cut when it fits with the marker


def test_the_asked_text_is_an_excerpt():
    ask = "Please fix TOKEN_AT_START " + "filler " * 300 + "and mind TOKEN_AT_END"
    ev = evidence.turn_evidence({"text": ask}, [], {})
    assert "TOKEN_AT_START" in ev["asked"] and "TOKEN_AT_END" in ev["asked"]
    assert len(ev["asked"]) <= evidence.ASK_HEAD + evidence.ASK_TAIL + 3
    assert ev["rounds"] == 0 and ev["replied"] == ""


def test_a_long_reply_keeps_its_start_and_its_conclusion():
    reply = "Done. " + "details " * 500 + "CONCLUSION: ship it"
    ev = evidence.turn_evidence({"text": "x"}, [{"text": reply, "tool_calls": []}], {})
    assert len(ev["replied"]) <= evidence.REPLY_HEAD + evidence.REPLY_TAIL + 3
    assert ev["replied"].startswith("Done.") and ev["replied"].endswith("CONCLUSION: ship it")


@pytest.mark.parametrize(
    ("reply", "calls", "decided"),
    [
        ("Turn 7 done.", [], False),
        ("We use PostgreSQL because it has row-level security.", [], True),
        ("Went with option B rather than A.", [], True),
        (
            "Patched it.",
            [("ApplyPatch", {"status": "success", "result": {"modified": ["a"]}})],
            True,
        ),
        ("Tried.", [("ApplyPatch", {"status": "error"})], False),
        ("Recorded the plan.", [("UpdateWorkItem", {"status": "success"})], True),
        ("", [("CreateWorkItem", {"status": "success"})], False),  # no reply: nothing to keep
    ],
)
def test_a_decision_gives_a_reason_or_comes_with_a_change(reply, calls, decided):
    rounds = [
        {"text": "", "tool_calls": [_call(f"c{i}", name) for i, (name, _) in enumerate(calls)]},
        {"text": reply, "tool_calls": []},
    ]
    results = {f"0:c{i}": {"envelope": env} for i, (_, env) in enumerate(calls)}
    assert evidence.turn_evidence({"text": "x"}, rounds, results)["decided"] is decided

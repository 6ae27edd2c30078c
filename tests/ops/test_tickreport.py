"""holon.ops.tickreport: a tick's report merged over passes, its exit code and human lines, and
the log policy of `holon tick --log`."""

from __future__ import annotations

from holon.ops import tickreport


def _turn(status: str, **more) -> dict:
    return {"message_id": "msg_1", "status": status, **more}


def test_a_second_pass_extends_an_agents_report_and_keeps_a_real_outcome():
    reports = [{"agent_id": "a", "home": "/h/a", "outcome": "ran", "turns": [_turn("completed")]}]
    tickreport.merge(
        reports,
        [
            {"agent_id": "a", "home": "/h/a", "outcome": "idle", "turns": [_turn("failed")]},
            {"agent_id": "b", "home": "/h/b", "outcome": "idle"},
        ],
    )
    assert [r["agent_id"] for r in reports] == ["a", "b"]
    assert reports[0]["outcome"] == "ran" and len(reports[0]["turns"]) == 2
    assert tickreport.progressed(reports[0]) and not tickreport.progressed(reports[1])


def test_the_exit_code_says_failed_turns_broken_homes_and_held_agents():
    ran = {"agent_id": "a", "outcome": "ran", "turns": [_turn("completed")]}
    assert tickreport.exit_code([ran], all_agents=False) == 0
    failed = {**ran, "turns": [_turn("failed")]}
    assert tickreport.exit_code([ran, failed], all_agents=True) == 1
    assert tickreport.exit_code([{"agent_id": "b", "outcome": "broken"}], all_agents=True) == 1
    paused = {"agent_id": "c", "outcome": "paused"}
    assert tickreport.exit_code([paused], all_agents=False) == 3
    assert tickreport.exit_code([paused], all_agents=True) == 0


def test_lines_skip_idle_agents_and_send_trouble_to_stderr():
    summary = {"kind": "provider_error", "summary": "503"}
    reports = [
        {"agent_id": "a", "outcome": "idle"},
        {"agent_id": "b", "outcome": "ran", "turns": [_turn("failed", failure_artifact=summary)]},
        {"agent_id": "c", "outcome": "paused"},
    ]
    assert tickreport.lines(reports) == [
        ("b: ran\n  msg_1 failed", False),
        ("c: paused\nhint: run `holon resume c` to process its queue", True),
    ]
    assert tickreport.texts(reports)[0] == "b: ran\n  msg_1 failed\n    provider_error: 503"


def test_the_log_keeps_what_happened_and_nothing_for_an_idle_run(holon_env):
    assert tickreport.nothing_to_log(0, [], [])
    assert not tickreport.nothing_to_log(1, [], [])
    code, trailer = tickreport.log("--all", 1, ["b: ran"], tickreport.error_lines("k", "m", "h"))
    path = holon_env / "logs" / "tick.log"
    assert code == 1 and trailer == [f"log: {path}"]
    assert path.read_text().splitlines()[1:] == ["b: ran", "holon: k: m", "hint: h"]


def test_a_log_that_cannot_be_written_fails_the_run(holon_env):
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "logs").write_text("not a directory")
    code, trailer = tickreport.log("--all", 0, ["b: ran"], [])
    assert code == 1 and trailer[0].startswith("holon: log_failed: cannot write ")

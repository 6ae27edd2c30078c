"""`holon timer create|list|cancel`: timer files, output shapes and fail-closed bad input."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, ok, ok_json, usage_error
from scenario_helpers import cli

from holon.cli.timer import timer_cmd

TIMER_KEYS = {
    "schema_version",
    "id",
    "agent_id",
    "text",
    "guard",
    "source",
    "created_at",
    "fired_count",
    "last_fired_at",
    "schedule",
    "due_ts",
    "due_at",
}


def timer_files(agent):
    return sorted(p.name for p in agent.timers.glob("*.json")) if agent.timers.exists() else []


def test_create_once_json_writes_one_timer_file(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2026-03-01T10:00:00Z")
    t = ok_json(timer_cmd, "create", "a", "--after", "10m", "--text", "ping", "--json")
    assert set(t) == TIMER_KEYS
    assert t["schedule"] == "once" and t["text"] == "ping" and t["agent_id"] == "a"
    assert t["id"].startswith("tmr_") and t["due_at"] == "2026-03-01T10:10:00.000Z"
    assert timer_files(agent) == [f"{t['id']}.json"]
    assert json.loads((agent.timers / f"{t['id']}.json").read_text()) == t


def test_create_every_and_cron_and_plain_output(agent, monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2026-03-02T07:00:00Z")  # a Monday
    every = ok_json(timer_cmd, "create", "a", "--every", "1h", "--if", "true", "--json")
    assert every["schedule"] == "every" and every["interval_s"] == 3600 and every["guard"] == "true"
    cron = ok_json(timer_cmd, "create", "a", "--cron", "0 8 * * 1-5", "--tz", "UTC", "--json")
    assert cron["schedule"] == "cron" and cron["tz"] == "UTC" and cron["cron"] == "0 8 * * 1-5"
    assert cron["due_at"] == "2026-03-02T08:00:00.000Z"
    plain = ok(timer_cmd, "create", "a", "--after", "90s").stdout
    timer_id, _, due = plain.strip().partition(" next at ")
    assert timer_id.startswith("tmr_") and due == "2026-03-02T07:01:30.000Z"
    assert len(timer_files(agent)) == 3


def test_list_is_soonest_first_in_json_and_text(agent):
    late = ok_json(timer_cmd, "create", "a", "--after", "2h", "--json")
    soon = ok_json(timer_cmd, "create", "a", "--every", "5m", "--if", "test -f x", "--json")
    listed = ok_json(timer_cmd, "list", "a", "--json")
    assert [t["id"] for t in listed] == [soon["id"], late["id"]]
    lines = ok(timer_cmd, "list", "a").stdout.splitlines()
    assert lines[0].startswith(soon["id"]) and "every 5m" in lines[0]
    assert lines[0].endswith("if: test -f x")
    assert lines[1].startswith(late["id"]) and lines[1].endswith("once")
    assert ok_json(timer_cmd, "list", "a", "--json") == listed  # listing changes nothing


def test_cancel_removes_the_file(agent):
    t = ok_json(timer_cmd, "create", "a", "--after", "10m", "--json")
    assert ok(timer_cmd, "cancel", "a", t["id"]).stdout == f"cancelled {t['id']}\n"
    assert timer_files(agent) == [] and ok_json(timer_cmd, "list", "a", "--json") == []
    _, err = fails("timer", "cancel", "a", t["id"], code=2, kind="unknown_timer")
    assert "timers: none" in err


def test_cancel_unknown_names_the_existing_timers(agent):
    t = ok_json(timer_cmd, "create", "a", "--after", "10m", "--json")
    _, err = fails("timer", "cancel", "a", "tmr_nope", code=2, kind="unknown_timer")
    assert t["id"] in err
    assert timer_files(agent) == [f"{t['id']}.json"]


@pytest.mark.parametrize(
    "args, kind",
    [
        (["--after", "soon"], "invalid_duration"),
        (["--after", "0s"], "invalid_duration"),
        (["--every", "-5m"], "invalid_duration"),
        (["--cron", "61 * * * *", "--tz", "UTC"], "invalid_cron"),
        (["--cron", "0 8 * * *", "--tz", "Mars/Olympus"], "invalid_timezone"),
        (["--after", "10m", "--every", "1h"], "invalid_timer"),
        ([], "invalid_timer"),
    ],
)
def test_bad_schedules_write_nothing(agent, args, kind):
    fails("timer", "create", "a", *args, code=2, kind=kind)
    assert timer_files(agent) == []


def test_unknown_agent_and_bad_usage(agent):
    fails("timer", "create", "nobody", "--after", "10m", code=2, kind="unknown_agent")
    fails("timer", "list", "nobody", code=2, kind="unknown_agent")
    fails("timer", "cancel", "nobody", "tmr_x", code=2, kind="unknown_agent")
    usage_error(timer_cmd, "create")
    usage_error(timer_cmd, "cancel", "a")
    assert timer_files(agent) == []


def test_cancel_refuses_a_path_outside_the_timers_dir(agent):
    assert agent.state_json.exists()
    rc, _, _ = cli("timer", "cancel", "a", "../state")
    assert agent.state_json.exists()
    assert rc == 2


def test_a_duration_needs_its_unit_and_the_listing_shows_the_text(agent):
    from helpers import run

    r = run("timer", "create", "a", "--after", "10")
    assert r.returncode == 2 and r.stderr.startswith("holon: invalid_duration: "), r.stderr
    assert "a number needs a unit" in r.stderr and "hint: say 10s or 10m" in r.stderr
    assert run("timer", "create", "a", "--every", "900", "--text", "x").returncode == 2
    assert run("timer", "list", "a").stdout.startswith("no timers; ")
    assert run("timer", "create", "a", "--every", "15m", "--text", "check mail").returncode == 0
    (line,) = run("timer", "list", "a").stdout.splitlines()
    assert line.endswith("  every 15m  'check mail'"), line

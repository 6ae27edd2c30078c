"""holon.ops.timers: create and cancel refresh next_due; listing is soonest first."""

from __future__ import annotations

import json

import pytest
from scenario_helpers import T0, cli, set_now

from holon.agent import nextdue, timers
from holon.errors import InvalidInput, UsageError
from holon.ops import timers as timer_ops


def test_create_and_cancel_refresh_next_due(agent, monkeypatch):
    set_now(monkeypatch, T0)
    later = timer_ops.create(agent, after="1h", text="later")
    assert nextdue.read(agent) == pytest.approx(T0 + 3600)
    sooner = timer_ops.create(agent, every="10m")
    assert nextdue.read(agent) == pytest.approx(T0 + 600)
    assert [t["id"] for t in timer_ops.listing(agent)] == [sooner["id"], later["id"]]
    assert timer_ops.cancel(agent, sooner["id"])["id"] == sooner["id"]
    assert nextdue.read(agent) == pytest.approx(T0 + 3600)
    timer_ops.cancel(agent, later["id"])
    assert not agent.next_due.exists() and timer_ops.listing(agent) == []


def test_cancel_unknown_timer_names_the_known_ones(agent):
    kept = timer_ops.create(agent, after="5m")
    with pytest.raises(UsageError) as err:
        timer_ops.cancel(agent, "tmr_nope")
    assert err.value.kind == "unknown_timer" and kept["id"] in err.value.hint
    assert nextdue.read(agent) is not None


def test_invalid_specs_write_nothing(agent):
    with pytest.raises(UsageError):
        timer_ops.create(agent, after="5m", every="1h")
    with pytest.raises(InvalidInput):
        timer_ops.create(agent, after="-5m")
    with pytest.raises(InvalidInput):
        timer_ops.create(agent, cron="0 8 * * 1-5", tz="Mars/Olympus")
    assert timers.load(agent) == [] and not agent.next_due.exists()


def test_cron_timer_with_guard_and_text(agent, monkeypatch):
    set_now(monkeypatch, T0)  # 2027-01-15T08:00:00Z, a Friday
    timer = timer_ops.create(agent, cron="30 9 * * *", tz="UTC", text="daily", guard="true")
    assert timer["schedule"] == "cron" and timer["due_at"] == "2027-01-15T09:30:00.000Z"
    assert (timer["text"], timer["guard"], timer["source"]) == ("daily", "true", "operator")
    assert nextdue.read(agent) == pytest.approx(T0 + 5400)


def test_timer_commands(agent, monkeypatch):
    set_now(monkeypatch, T0)
    code, out, _ = cli("timer", "create", "a", "--every", "1h", "--if", "test -e x", "--json")
    assert code == 0
    tid = json.loads(out)["id"]
    code, out, _ = cli("timer", "list", "a")
    assert out.split() == [
        tid,
        "2027-01-15T09:00:00.000Z",
        "every",
        "1h",
        "if:",
        "test",
        "-e",
        "x",
    ]
    assert json.loads(cli("timer", "list", "a", "--json")[1])[0]["id"] == tid
    assert cli("timer", "cancel", "a", tid) == (0, f"cancelled {tid}\n", "")
    assert not agent.next_due.exists()

"""holon.clock: HOLON_NOW pins the clock (epoch or ISO); ISO output is UTC, milliseconds, Z."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from holon import clock

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def test_holon_now_as_epoch_pins_now_ts_and_now_iso(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "1800000000")
    assert clock.now_ts() == T0
    assert clock.now_iso() == "2027-01-15T08:00:00.000Z"
    assert clock.now() == datetime(2027, 1, 15, 8, 0, tzinfo=UTC)


def test_holon_now_as_iso_pins_the_same_instant(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2027-01-15T08:00:00Z")
    assert clock.now_ts() == T0
    monkeypatch.setenv("HOLON_NOW", "2027-01-15T10:00:00+02:00")
    assert clock.now_ts() == T0
    assert clock.now_iso() == "2027-01-15T08:00:00.000Z"


def test_holon_now_naive_iso_is_utc(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", "2027-01-15T08:00:00")
    assert clock.now_ts() == T0


def test_fractional_epoch_keeps_milliseconds(monkeypatch):
    monkeypatch.setenv("HOLON_NOW", str(T0 + 1.25))
    assert clock.now_iso() == "2027-01-15T08:00:01.250Z"


def test_unpinned_clock_follows_real_time(monkeypatch):
    monkeypatch.delenv("HOLON_NOW", raising=False)
    before = time.time()
    got = clock.now_ts()
    assert before <= got <= time.time()


def test_iso_format_is_utc_z_with_milliseconds():
    text = clock.iso(T0 + 0.123456)
    assert text == "2027-01-15T08:00:00.123Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", clock.iso())
    assert "+00:00" not in clock.iso(0)
    assert clock.iso(0) == "1970-01-01T00:00:00.000Z"


def test_parse_iso_naive_is_utc_and_roundtrips():
    naive = clock.parse_iso("2027-01-15T08:00:00")
    assert naive.tzinfo is not None and naive.utcoffset().total_seconds() == 0
    assert naive.timestamp() == T0
    assert clock.parse_iso("2027-01-15T08:00:00.500Z").timestamp() == T0 + 0.5
    offset = clock.parse_iso("2027-01-15T09:00:00+01:00")
    assert offset.timestamp() == T0 and offset.utcoffset().total_seconds() == 3600
    assert clock.parse_iso(clock.iso(T0 + 7.5)).timestamp() == T0 + 7.5

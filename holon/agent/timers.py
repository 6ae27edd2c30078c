"""Timer files `.holon/timers/<id>.json`: one-shot (`after`), repeating (`every`) and `cron` timers.

A repeating timer keeps its planned schedule: the next occurrence is computed
from the previous *planned* time, never from when the tick happened to fire it.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from holon import clock
from holon.errors import InvalidInput, UsageError
from holon.home.layout import Home
from holon.ids import new_id
from holon.store.atomic import read_json, write_json

TIMER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")


def parse_duration(text: str) -> float:
    """`90`, `90s`, `10m`, `1h`, `2d`, `500ms` -> seconds."""
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise InvalidInput(
            f"invalid duration {text!r}",
            kind="invalid_duration",
            hint="use a positive number with a unit: 500ms, 30s, 10m, 1h, 2d, 1w",
        )
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


def local_tz_name() -> str:
    tz = os.environ.get("TZ")
    if tz:
        return tz
    try:
        link = os.readlink("/etc/localtime")
        return link.split("zoneinfo/", 1)[1]
    except (OSError, IndexError):
        return "UTC"


def _zone(name: str):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            f"unknown time zone {name!r}",
            kind="invalid_timezone",
            hint="use an IANA name such as Europe/Berlin or UTC",
        ) from None


def cron_next(expr: str, tz: str, after_ts: float) -> float:
    from croniter import croniter

    start = datetime.fromtimestamp(after_ts, tz=_zone(tz))
    try:
        return float(croniter(expr, start).get_next(float))
    except (ValueError, KeyError) as exc:
        raise InvalidInput(
            f"invalid cron expression {expr!r}: {exc}",
            kind="invalid_cron",
            hint='five fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * 1-5"',
        ) from None


def next_after(timer: dict[str, Any], planned_ts: float) -> float | None:
    """The planned occurrence following `planned_ts` (None for one-shot timers)."""
    if timer["schedule"] == "every":
        return planned_ts + float(timer["interval_s"])
    if timer["schedule"] == "cron":
        return cron_next(timer["cron"], timer["tz"], planned_ts)
    return None


def path(home: Home, timer_id: str) -> Path:
    """The file of timer `timer_id`; an id that is not a plain file name names no timer."""
    if not TIMER_ID.fullmatch(timer_id or ""):
        raise UsageError(
            f"no timer {timer_id!r} for {home.agent_id}",
            kind="unknown_timer",
            hint=f"see `holon timer list {home.agent_id}` for its timers",
        )
    return home.timers / f"{timer_id}.json"


def create(
    home: Home,
    *,
    after: str | None = None,
    every: str | None = None,
    cron: str | None = None,
    at: float | None = None,
    tz: str | None = None,
    text: str = "",
    guard: str | None = None,
    timer_id: str | None = None,
    source: str = "operator",
    model_ref: str | None = None,
) -> dict[str, Any]:
    """A new timer file (replacing one of the same id): once `after` a duration or `at` a time,
    `every` interval, or on a `cron` schedule in `tz`. `model_ref`: the model the turn that set
    it ran with, carried by the messages it fires."""
    if sum(x is not None for x in (after, every, cron, at)) != 1:
        raise UsageError(
            "give exactly one of --after, --every or --cron",
            kind="invalid_timer",
            hint='holon timer create AGENT --after 10m | --every 1h | --cron "0 8 * * 1-5"',
        )
    now = clock.now_ts()
    timer: dict[str, Any] = {
        "schema_version": 1,
        "id": timer_id or new_id("tmr"),
        "agent_id": home.agent_id,
        "text": text,
        "guard": guard,
        "source": source,
        "created_at": clock.iso(now),
        "fired_count": 0,
        "last_fired_at": None,
    }
    if model_ref:
        timer["model_ref"] = model_ref
    if after is not None or at is not None:
        timer.update(
            schedule="once", due_ts=at if at is not None else now + parse_duration(after or "")
        )
    elif every is not None:
        interval = parse_duration(every)
        timer.update(schedule="every", interval_s=interval, due_ts=now + interval)
    else:
        zone = tz or local_tz_name()
        timer.update(schedule="cron", cron=cron, tz=zone, due_ts=cron_next(cron or "", zone, now))
    timer["due_at"] = clock.iso(timer["due_ts"])
    save(home, timer)
    return timer


def save(home: Home, timer: dict[str, Any]) -> None:
    home.timers.mkdir(parents=True, exist_ok=True)
    write_json(path(home, timer["id"]), timer)


def ids(home: Home) -> list[str]:
    """The ids of every timer file, sorted (no file is read)."""
    try:
        names = os.listdir(home.timers)
    except FileNotFoundError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".json") and TIMER_ID.fullmatch(n[:-5]))


def load(home: Home) -> list[dict[str, Any]]:
    timers = []
    for timer_id in ids(home):
        data = read_json(path(home, timer_id))
        if isinstance(data, dict) and "due_ts" in data:
            timers.append(data)
    return sorted(timers, key=lambda t: t["due_ts"])


def cancel(home: Home, timer_id: str) -> dict[str, Any]:
    data = read_json(path(home, timer_id))
    if not data:
        known = ", ".join(t["id"] for t in load(home)) or "none"
        raise UsageError(
            f"no timer {timer_id!r} for {home.agent_id}",
            kind="unknown_timer",
            hint=f"timers: {known} (see `holon timer list {home.agent_id}`)",
        )
    os.unlink(path(home, timer_id))
    return data


def next_fire(home: Home) -> float | None:
    timers = load(home)
    return timers[0]["due_ts"] if timers else None

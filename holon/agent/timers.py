"""Timer files `.holon/timers/<id>.json`: one-shot (`after`), repeating (`every`) and `cron` timers.

A repeating timer keeps its planned schedule: the next occurrence is computed
from the previous *planned* time, never from when the tick happened to fire it.
Intervals run from MIN_INTERVAL_S (1 s) to MAX_DELAY_S (10 years); a cron expression has exactly
five range-checked fields. A timer file that cannot be read as a timer is set aside as
`<id>.json.corrupt` by `read_or_set_aside` (the tick, `holon timer list`), never fired.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon import clock, strictjson
from holon.errors import InvalidInput, UsageError
from holon.home.layout import Home
from holon.ids import is_id, new_id, quote
from holon.store import crashpoint
from holon.store.atomic import write_json
from holon.vocab import SCHEMA_VERSION

if TYPE_CHECKING:  # the record's keys, typed (stdlib, but kept off the light path)
    from holon.model.dicts import Timer

TIMER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
MIN_INTERVAL_S = 1.0  # the shortest --every: a faster timer would spin the agent
MAX_DELAY_S = 10 * 366 * 86400  # the longest --after/--every (ten years)
MAX_TIMER_BYTES = 256 * 1024  # a timer file larger than this is not a timer
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"\s*(\d{1,12}(?:\.\d{1,9})?)\s*(ms|s|m|h|d|w)\s*")


def parse_duration(text: str, *, minimum: float = 0.0, maximum: float = MAX_DELAY_S) -> float:
    """`90s`, `10m`, `1h`, `2d`, `500ms` -> seconds, positive, within [minimum, maximum]. A
    number without a unit is refused: `10` could mean seconds or minutes."""
    m = _DURATION.fullmatch(text or "")
    seconds = float(m.group(1)) * _UNITS[m.group(2)] if m else 0.0
    if not m or seconds <= 0 or not minimum <= seconds <= maximum:
        bare = re.fullmatch(r"\s*\d+(\.\d+)?\s*", text or "")
        raise InvalidInput(
            f"invalid duration {quote(text, 60)}" + (": a number needs a unit" if bare else ""),
            kind="invalid_duration",
            hint=(f"say {text.strip()}s or {text.strip()}m; " if bare else "")
            + f"use a number with a unit: 500ms, 30s, 10m, 1h, 2d, 1w; from "
            f"{_span(minimum) if minimum else 'just above 0'} to {_span(maximum)}",
        )
    return seconds


def span(seconds: float) -> str:
    """`seconds` as the largest whole unit: 900 -> 15m, 90 -> 90s."""
    return _span(seconds)


def _span(seconds: float) -> str:
    for unit in ("d", "h", "m", "s"):
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{int(seconds // _UNITS[unit])}{unit}"
    return f"{seconds:g}s"


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


_CRON_FIELDS = (  # name, lowest, highest, names accepted in place of numbers
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, ("jan feb mar apr may jun jul aug sep oct nov dec").split()),
    ("day-of-week", 0, 7, ("sun mon tue wed thu fri sat").split()),
)
_CRON_ITEM = re.compile(r"(\*|([0-9a-z]{1,3})(?:-([0-9a-z]{1,3}))?)(?:/([0-9]{1,2}))?")
_CRON_HINT = 'five fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * 1-5"'


def check_cron(expr: str) -> str:
    """`expr` when it is exactly five cron fields, each within its range; else invalid_cron."""
    fields = (expr or "").split()
    if len(fields) != 5 or len(expr) > 200:
        _bad_cron(expr, f"it has {len(fields)} fields, not 5" if len(expr) <= 200 else "too long")
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        for item in text.lower().split(","):
            m = _CRON_ITEM.fullmatch(item)
            if not m:
                _bad_cron(expr, f"{name} field {text!r} is not a list of N, N-M, * or */S")
            values = [_cron_value(v, names) for v in m.group(2, 3) if v is not None]
            step = int(m.group(4)) if m.group(4) else 1
            if any(v is None or not low <= v <= high for v in values) or not 1 <= step <= high:
                _bad_cron(expr, f"{name} field {text!r} is out of range {low}-{high}")
            if len(values) == 2 and values[0] > values[1]:  # type: ignore[operator]
                _bad_cron(expr, f"{name} field {text!r} has a range that runs backwards")
    return " ".join(fields)


def _cron_value(text: str, names: tuple[str, ...] | list[str]) -> int | None:
    if text.isdigit():
        return int(text)
    return names.index(text) + (1 if len(names) == 12 else 0) if text in names else None


def _bad_cron(expr: str, why: str) -> None:
    raise InvalidInput(
        f"invalid cron expression {quote(expr, 120)}: {why}", kind="invalid_cron", hint=_CRON_HINT
    )


def cron_next(expr: str, tz: str, after_ts: float) -> float:
    from croniter import croniter

    check_cron(expr)
    start = datetime.fromtimestamp(after_ts, tz=_zone(tz))
    try:
        return float(croniter(expr, start).get_next(float))
    except Exception as exc:  # croniter's errors (bad expression, no such date) share no base
        raise InvalidInput(
            f"invalid cron expression {quote(expr, 120)}: {str(exc)[:120]}",
            kind="invalid_cron",
            hint=_CRON_HINT,
        ) from None


def next_after(timer: dict[str, Any], planned_ts: float) -> float | None:
    """The planned occurrence following `planned_ts` (None for one-shot timers)."""
    if timer["schedule"] == "every":  # a timer older than the minimum is held to it
        return planned_ts + max(float(timer["interval_s"]), MIN_INTERVAL_S)
    if timer["schedule"] == "cron":
        return cron_next(timer["cron"], timer["tz"], planned_ts)
    return None


def path(home: Home, timer_id: str) -> Path:
    """The file of timer `timer_id`; an id that is not a plain file name names no timer."""
    if not (is_id(timer_id) and TIMER_ID.fullmatch(timer_id)):
        raise UsageError(
            f"no timer {quote(timer_id)} for {home.agent_id}",
            kind="unknown_timer",
            hint=f"see `holon timer list {home.agent_id}` for its timers",
        )
    return home.timers / f"{timer_id}.json"


def create(home: Home, **spec: Any) -> dict[str, Any]:
    """`build` and `save` a timer. The next_due index is the caller's (holon.ops.timers.create
    lowers it before the file is written)."""
    timer = build(home, **spec)
    save(home, timer)
    return timer


def build(
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
) -> Timer:
    """A new timer, not yet saved (a file of the same id is replaced on save): once `after` a
    duration or `at` a time, `every` interval, or on a `cron` schedule in `tz`. `model_ref`: the
    model the turn that set it ran with, carried by the messages it fires."""
    if sum(x is not None for x in (after, every, cron, at)) != 1:
        raise UsageError(
            "give exactly one of --after, --every or --cron",
            kind="invalid_timer",
            hint='holon timer create AGENT --after 10m | --every 1h | --cron "0 8 * * 1-5"',
        )
    now = clock.now_ts()
    timer: Timer = {
        "schema_version": SCHEMA_VERSION,
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
    if at is not None and not (math.isfinite(at) and abs(at - now) <= MAX_DELAY_S):
        raise InvalidInput(
            f"timer time {at!r} is out of range", kind="invalid_duration", hint=_span(MAX_DELAY_S)
        )
    if after is not None or at is not None:
        timer.update(
            schedule="once", due_ts=at if at is not None else now + parse_duration(after or "")
        )
    elif every is not None:
        interval = parse_duration(every, minimum=MIN_INTERVAL_S)
        timer.update(schedule="every", interval_s=interval, due_ts=now + interval)
    else:
        zone = tz or local_tz_name()
        cron = check_cron(cron or "")
        timer.update(schedule="cron", cron=cron, tz=zone, due_ts=cron_next(cron, zone, now))
    timer["due_at"] = clock.iso(timer["due_ts"])
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


class CorruptTimer(ValueError):
    """A timer file that cannot be read as a timer; the message says why."""


def read(home: Home, timer_id: str) -> dict[str, Any] | None:
    """Timer `timer_id` (None when its file is gone); CorruptTimer when the file is not a timer.
    Reads at most MAX_TIMER_BYTES and never blocks (a FIFO or a device is not a timer)."""
    try:
        fd = os.open(path(home, timer_id), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptTimer(exc.strerror or str(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CorruptTimer("it is not a regular file")
        data = os.read(fd, MAX_TIMER_BYTES + 1)
    except OSError as exc:
        raise CorruptTimer(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if len(data) > MAX_TIMER_BYTES:
        raise CorruptTimer(f"it is larger than {MAX_TIMER_BYTES} bytes")
    try:
        timer = strictjson.loads(data)
    except strictjson.InvalidJson as exc:
        raise CorruptTimer(f"it is not valid JSON ({exc})") from None
    return _checked(timer, timer_id)


def _checked(timer: Any, timer_id: str) -> dict[str, Any]:
    if not isinstance(timer, dict):
        raise CorruptTimer(f"it holds a JSON {type(timer).__name__}, not an object")
    due = timer.get("due_ts")
    schedule = timer.get("schedule")
    if timer.get("id") != timer_id:
        raise CorruptTimer("its id does not match its file name")
    if isinstance(due, bool) or not isinstance(due, int | float) or abs(due) > 1e11:
        raise CorruptTimer("due_ts is not a time")
    if schedule == "every":
        interval = timer.get("interval_s")
        if isinstance(interval, bool) or not isinstance(interval, int | float) or interval <= 0:
            raise CorruptTimer("interval_s is not a positive number")
    elif schedule == "cron":
        if not isinstance(timer.get("cron"), str) or not isinstance(timer.get("tz"), str):
            raise CorruptTimer("cron or tz is not a string")
        try:
            check_cron(timer["cron"])
            _zone(timer["tz"])
        except InvalidInput:
            raise CorruptTimer(
                f"cron {quote(timer['cron'], 60)} is not five valid fields"
            ) from None
    elif schedule != "once":
        raise CorruptTimer(f"schedule {quote(schedule, 40)} is not once, every or cron")
    for key in ("text", "guard", "model_ref", "source"):
        if timer.get(key) is not None and not isinstance(timer[key], str):
            raise CorruptTimer(f"{key} is not a string")
    return timer


def set_aside(home: Home, timer_id: str) -> str:
    """Move a corrupt timer file out of the way (`<id>.json.corrupt`); returns its new name."""
    src = path(home, timer_id)
    dst = src.with_name(src.name + ".corrupt")
    crashpoint.step("timers.set_aside")
    try:
        os.replace(src, dst)
    except OSError:  # gone already, or the .corrupt name is taken by a directory: leave it
        pass
    return dst.name


def read_or_set_aside(
    home: Home, timer_id: str, event: Callable[..., Any] | None = None
) -> dict[str, Any] | None:
    """Timer `timer_id`, or None when it is gone or corrupt; a corrupt file is set aside and
    reported through `event("timer_set_aside", ...)` when given."""
    try:
        return read(home, timer_id)
    except CorruptTimer as exc:
        moved = set_aside(home, timer_id)
        if event is not None:
            event("timer_set_aside", timer_id=timer_id, problem=str(exc), moved_to=moved)
        return None


def load(home: Home, event: Callable[..., Any] | None = None) -> list[dict[str, Any]]:
    """Every readable timer, soonest first. With `event`, corrupt files are set aside (and
    reported); without, they are skipped and left for the tick to set aside."""
    timers = []
    for timer_id in ids(home):
        if event is not None:
            timer = read_or_set_aside(home, timer_id, event)
        else:
            try:
                timer = read(home, timer_id)
            except CorruptTimer:
                continue
        if timer is not None:
            timers.append(timer)
    return sorted(timers, key=lambda t: t["due_ts"])


def any_corrupt(home: Home) -> bool:
    """Whether some timer file is corrupt (the next tick should run to set it aside)."""
    for timer_id in ids(home):
        try:
            read(home, timer_id)
        except CorruptTimer:
            return True
    return False


def cancel(home: Home, timer_id: str) -> dict[str, Any]:
    try:
        data = read(home, timer_id)
    except CorruptTimer:  # a corrupt timer can always be cancelled: remove what is there
        data = {"id": timer_id, "corrupt": True}
    if not data:
        known = ", ".join(t["id"] for t in load(home)) or "none"
        raise UsageError(
            f"no timer {timer_id!r} for {home.agent_id}",
            kind="unknown_timer",
            hint=f"timers: {known} (see `holon timer list {home.agent_id}`)",
        )
    crashpoint.step("timers.cancel")
    try:
        os.unlink(path(home, timer_id))
    except IsADirectoryError:
        raise InvalidInput(
            f"timer {timer_id} is a directory, not a file",
            kind="corrupt_timer",
            hint=f"remove {path(home, timer_id)} by hand",
        ) from None
    except FileNotFoundError:
        pass
    return data


def next_fire(home: Home) -> float | None:
    """The soonest due time; a corrupt timer file counts as due now, so that the next tick runs
    and sets it aside."""
    soonest: float | None = None
    for timer_id in ids(home):
        try:
            timer = read(home, timer_id)
        except CorruptTimer:
            return clock.now_ts()
        if timer is not None and (soonest is None or timer["due_ts"] < soonest):
            soonest = float(timer["due_ts"])
    return soonest

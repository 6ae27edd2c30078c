"""Time, injectable: `HOLON_NOW` (ISO-8601 or epoch seconds) pins the clock for tests and
replays."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime


def now_ts() -> float:
    pinned = os.environ.get("HOLON_NOW")
    if pinned:
        try:
            return float(pinned)
        except ValueError:
            return parse_iso(pinned).timestamp()
    return time.time()


def now() -> datetime:
    return datetime.fromtimestamp(now_ts(), tz=UTC)


def iso(ts: float | None = None) -> str:
    dt = now() if ts is None else datetime.fromtimestamp(ts, tz=UTC)
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(now_ts())


def parse_iso(text: str) -> datetime:
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)

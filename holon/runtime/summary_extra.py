"""Parts of the status document owned by later subsystems (work items, timers, triggers)."""

from __future__ import annotations

from typing import Any

from holon.home.layout import Home


def extra(home: Home, state: Any) -> dict[str, Any]:
    return {}

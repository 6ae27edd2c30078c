"""Driving the console under Textual's pilot: what the conversation shows, and waiting (with a
deadline, never a fixed delay) for a state of the app."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.widgets import RichLog

from holon.console.app import ConsoleApp
from holon.console.composer import Composer

DEADLINE_S = 20


def shown(app: ConsoleApp) -> str:
    """The conversation as the screen shows it, one line per row."""
    log = app.query_one("#conversation", RichLog)
    return "\n".join(line.text for line in log.lines)


async def until(pilot, check: Callable[[], object], timeout: float = DEADLINE_S):
    """Let the app run until `check()` is truthy; its value. Fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await pilot.pause(0.05)
    raise AssertionError(f"not reached within {timeout} s")


async def submit(pilot, text: str) -> None:
    """Type `text` into the composer as a user would, then Enter."""
    composer = pilot.app.query_one(Composer)
    composer.focus()
    await pilot.press(*text)
    await pilot.press("enter")

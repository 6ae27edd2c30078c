"""The composer: a multi-line text area that is always available. Enter submits; Ctrl-J,
Shift-Enter or Alt-Enter (or a trailing backslash before Enter) starts a new line; Up on the
first line and Down on the last walk the history of submitted prompts."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("ctrl+j", "shift+enter", "alt+enter")
HISTORY_MAX = 500


class History:
    """Submitted prompts, oldest first, and a cursor that walks them (plain data)."""

    def __init__(self, items: list[str] | None = None) -> None:
        self.items = list(items or [])[-HISTORY_MAX:]
        self.cursor = len(self.items)
        self.draft = ""

    def add(self, text: str) -> None:
        if text and (not self.items or self.items[-1] != text):
            self.items.append(text)
            del self.items[:-HISTORY_MAX]
        self.cursor, self.draft = len(self.items), ""

    def back(self, current: str) -> str | None:
        """The previous prompt (the text being written is kept as the draft)."""
        if self.cursor == 0:
            return None
        if self.cursor == len(self.items):
            self.draft = current
        self.cursor -= 1
        return self.items[self.cursor]

    def forward(self) -> str | None:
        """The next prompt, then the draft; None past the end."""
        if self.cursor >= len(self.items):
            return None
        self.cursor += 1
        return self.items[self.cursor] if self.cursor < len(self.items) else self.draft


class Composer(TextArea):
    """The prompt input."""

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Message the agent · Enter sends · /help",
            **kwargs,
        )
        self.prompts = history

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter" and not self.text.endswith("\\"):
            self._stop(event)
            self.submit()
            return
        if key == "enter" or key in NEWLINE_KEYS:
            self._stop(event)
            if self.text.endswith("\\") and key == "enter":
                self.action_delete_left()
            self.insert("\n")
            return
        if key == "up" and self.cursor_location[0] == 0:
            self._recall(self.prompts.back(self.text), event)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            self._recall(self.prompts.forward(), event)
            return
        await super()._on_key(event)

    def submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.prompts.add(text)
        self.clear()
        self.post_message(self.Submitted(text))

    def _recall(self, text: str | None, event: events.Key) -> None:
        self._stop(event)
        if text is not None:
            self.load_text(text)
            self.move_cursor(self.document.end)

    @staticmethod
    def _stop(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

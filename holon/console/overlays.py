"""The console's overlays: panes over the conversation (transcript, events, tasks, child agents,
workspace and sandbox, debug prompt, agents, help), never modal screens: the composer below stays
available while one is open. Esc closes the open overlay before anything else; what they read
comes from holon.console.views, in a worker thread."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from holon.console import views
from holon.home.layout import Home

TASK_REFRESH_S = 1.0

CSS = """
Overlay { height: 2fr; border: round $accent; background: $surface; padding: 0 1; }
Overlay .overlay-title { text-style: bold; }
Overlay .overlay-hint { color: $text-muted; }
Overlay RichLog { height: 1fr; }
Overlay OptionList { height: auto; max-height: 40%; }
"""


class Log(RichLog, can_focus=False):
    """An overlay's text: scrolled by PgUp/PgDn and the mouse, never focused (the keyboard stays
    with the composer)."""


class Overlay(Vertical):
    """A titled pane over the conversation; the app closes it on Esc."""

    DEFAULT_CSS = CSS
    hint = "Esc closes · PgUp/PgDn scroll · typing goes to the composer"

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text), classes="overlay-title")
        yield from self.body()
        yield Static(self.hint, classes="overlay-hint")

    def body(self) -> ComposeResult:
        yield Log(wrap=True, markup=False, highlight=False, min_width=20)

    def scrolled(self) -> Widget:
        """What PgUp/PgDn scroll while this overlay is open."""
        return self.query(Log).last()


class TextOverlay(Overlay):
    """Text loaded once in a worker thread: a command's output, shown from its end (the latest
    records), or help, shown from its beginning."""

    def __init__(self, title: str, load: Callable[[], str], from_end: bool = True) -> None:
        super().__init__(title)
        self.load, self.from_end = load, from_end

    def on_mount(self) -> None:
        self.query_one(Log).write(Text("loading…"))
        self.run_worker(self._load, thread=True, exclusive=True)

    def _load(self) -> None:
        text = self.load()
        self.app.call_from_thread(self._show, text)

    def _show(self, text: str) -> None:
        log = self.query_one(Log)
        log.clear()
        log.write(Text(text), scroll_end=self.from_end)


class TasksOverlay(Overlay):
    """The agent's tasks: pick one to see its output; Enter in the input line sends a line to an
    interactive task (or a follow-up message to a running child). The list has the keyboard when
    the overlay opens; typing there goes to the composer; only the input line takes text."""

    hint = (
        "↑/↓ pick a task · Enter or Tab: its input line (Enter sends the line to the task)"
        " · typing elsewhere goes to the composer · Esc closes"
    )

    def __init__(self, home: Home, title: str = "Tasks", children_only: bool = False) -> None:
        super().__init__(title)
        self.home, self.children_only = home, children_only
        self.task_id: str | None = None
        self.output_shown: tuple[str, str] | None = None  # (task id, text) on screen

    def body(self) -> ComposeResult:
        yield OptionList(id="task-list")
        yield Log(wrap=True, markup=False, highlight=False, min_width=20, id="task-output")
        yield Input(placeholder="input for the selected task (Enter sends)", id="task-input")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.run_worker(self._list, thread=True, exclusive=True, group="list")
        self.set_interval(TASK_REFRESH_S, self._refresh_output)

    def _list(self) -> None:
        rows = [r for r in views.task_rows(self.home) if r["child"] or not self.children_only]
        self.app.call_from_thread(self._show_list, rows)

    def _show_list(self, rows: list[dict]) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        if not rows:
            options.add_option(Option("no tasks", id="-", disabled=True))
            return
        options.add_options([Option(Text(r["label"]), id=r["task_id"]) for r in rows])
        options.highlighted = 0

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.task_id = event.option.id
        self._refresh_output()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.query_one(Input).focus()

    def _refresh_output(self) -> None:
        if self.task_id and self.task_id != "-":
            task_id = self.task_id
            self.run_worker(lambda: self._output(task_id), thread=True, group="output")

    def _output(self, task_id: str) -> None:
        text = views.task_output(self.home, task_id)
        self.app.call_from_thread(self._show_output, task_id, text)

    def _show_output(self, task_id: str, text: str) -> None:
        """Show a task's output when it changed (a refresh that changes nothing leaves the
        place the user scrolled back to)."""
        if task_id != self.task_id or self.output_shown == (task_id, text):
            return
        self.output_shown = (task_id, text)
        log = self.query_one("#task-output", Log)
        log.clear()
        log.write(Text(text))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        task_id, line = self.task_id, event.value
        event.input.value = ""
        if not task_id or task_id == "-":
            self.notify("pick a task first", severity="warning")
            return
        self.run_worker(lambda: self._send(task_id, line), thread=True, group="input")

    def _send(self, task_id: str, line: str) -> None:
        receipt = views.send_input(self.home, task_id, line)
        self.app.call_from_thread(lambda: self.notify(receipt[:300], markup=False))
        self.app.call_from_thread(self._refresh_output)


class AgentsOverlay(Overlay):
    """The agents of this home, with their unread action_required; Enter switches to one."""

    hint = "↑/↓ and Enter switch to an agent · typing goes to the composer · Esc closes"

    class Picked(Message):
        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    def __init__(self, current: str) -> None:
        super().__init__("Agents")
        self.current = current

    def body(self) -> ComposeResult:
        yield OptionList(id="agent-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.run_worker(self._list, thread=True, exclusive=True)

    def scrolled(self) -> Widget:
        return self.query_one(OptionList)

    def _list(self) -> None:
        rows = views.agent_rows(self.current)
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[dict]) -> None:
        options = self.query_one(OptionList)
        options.add_options([Option(Text(r["label"]), id=r["agent_id"]) for r in rows])
        ids = [r["agent_id"] for r in rows]
        options.highlighted = ids.index(self.current) if self.current in ids else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Picked(event.option.id or ""))

"""The console app: one conversation, a composer that is always available, a working line while
a turn runs, and overlays. The agent's files are the source of truth: the conversation is read
from its ledgers (holon.console.conversation), prompts are admitted and turns run by
holon.console.runner, and closing the console leaves the agent's tasks, timers and children as
they are."""

from __future__ import annotations

import time
from functools import partial

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, RichLog, Static

from holon.console import views
from holon.console.commands import OVERLAYS, help_text
from holon.console.composer import Composer, History
from holon.console.conversation import Conversation, Entry, activity, level_named, settles
from holon.console.conversation import visible as is_visible
from holon.console.overlays import AgentsOverlay, Overlay, TasksOverlay, TextOverlay
from holon.console.runner import TickEnd, TurnRunner, reap_left
from holon.errors import HolonError
from holon.home.layout import Home
from holon.safetext import for_terminal, one_line

POLL_S = 0.2  # how often the ledgers and the tick are looked at
AGENTS_POLL_S = 5.0  # how often the other agents' unread action_required are counted
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CSS = """
Screen:inline { height: 80vh; }
#header { height: 1; background: $accent; color: $text; padding: 0 1; }
#body { height: 1fr; }
#conversation { height: 1fr; padding: 0 1; scrollbar-gutter: stable; }
#working { height: auto; color: $warning; padding: 0 1; }
#hints { height: 1; color: $text-muted; padding: 0 1; }
#composer { height: auto; min-height: 3; max-height: 10; border: round $accent; }
"""


class ChatLog(RichLog, can_focus=False):
    """The conversation: lines are wrapped when written, so each new width (the first known
    one too: rows written before it was known) wraps them again. Never focused: a click on it
    leaves the keyboard with the composer; PgUp/PgDn and the mouse scroll it. It follows its
    end (new rows, and an overlay that makes it smaller, keep the last line in view) unless the
    user has scrolled back to read; scrolling to the end follows again."""

    following = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.following = new_value >= self.max_scroll_y

    def write(  # type: ignore[override]
        self, content, width=None, expand=False, shrink=True, scroll_end=None, animate=False
    ) -> ChatLog:
        # RichLog calls this again, positionally, for rows written before its size was known
        scroll_end = self.following if scroll_end is None else scroll_end
        super().write(content, width, expand, shrink, scroll_end, animate)
        return self

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        if event.size.width and event.size.width != getattr(self, "wrapped_at", None):
            self.call_after_refresh(self.app.redraw)  # type: ignore[attr-defined]
        self.wrapped_at = event.size.width
        if self.following:
            self.call_after_refresh(self.scroll_end, animate=False)


class ConsoleApp(App[int]):
    """`holon console AGENT`."""

    CSS = CSS
    TITLE = "holon console"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+q", "quit_console", "Quit", priority=True),
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True),
        Binding("escape", "close_overlay", "Close", priority=True),
        Binding("pageup", "page(-1)", "Scroll up", priority=True),
        Binding("pagedown", "page(1)", "Scroll down", priority=True),
        Binding("f1", "overlay('help')", "Help"),
        Binding("f2", "overlay('transcript')", "Transcript"),
        Binding("f3", "overlay('tasks')", "Tasks"),
        Binding("f4", "overlay('agents')", "Agents"),
        Binding("f5", "overlay('workspace')", "Workspace"),
        Binding("f6", "overlay('children')", "Children"),
        Binding("f7", "overlay('debug')", "Debug prompt"),
        Binding("f8", "overlay('events')", "Events"),
    ]

    def __init__(self, home: Home, model: str | None = None, level: str = "info") -> None:
        super().__init__()
        self.model, self.level = model, level
        self.others = ""  # other agents with unread action_required
        self.overlay: Overlay | None = None  # the open overlay, a pane over the conversation
        self.polls = 0
        self._open(home)

    def _open(self, home: Home) -> None:
        self.home, self.detached = home, None
        self.runner = TurnRunner(home, self.model)
        self.conversation = Conversation(home)
        self.pending: set[str] = set()  # our prompts not yet settled
        self.activity = ""
        self.started = 0.0
        self.behind_other = False  # a tick of ours found the lock held: retry once it is free

    def compose(self) -> ComposeResult:
        # kept as attributes: the app refers to them on every poll
        self.header = Static(id="header")
        self.chat = ChatLog(id="conversation", wrap=True, markup=False, highlight=False)
        self.working_line = Static(id="working")
        prompts = [e.text for e in self.conversation.entries if e.record is None]
        self.composer = Composer(History(prompts), id="composer")
        yield self.header
        with Vertical(id="body"):  # an overlay opens here, above the conversation
            yield self.chat
        yield self.working_line
        yield self.composer
        yield Static("F1 help · F2 transcript · F3 tasks · F4 agents · Ctrl-Q quit", id="hints")

    def on_mount(self) -> None:
        self.redraw()
        self.composer.focus()
        self.set_interval(POLL_S, self.poll)
        self.set_interval(AGENTS_POLL_S, self._count_others)
        self._count_others()

    # -- the conversation -------------------------------------------------------------------

    def redraw(self) -> None:
        log = self.chat
        log.clear()
        for entry in self.conversation.entries:
            self._write(log, entry)
        self._status()

    def _width(self) -> int | None:
        """The conversation's width, to wrap at (None before it is laid out)."""
        return self.chat.scrollable_content_region.width or None

    def _write(self, log: RichLog, entry: Entry) -> None:
        if is_visible(entry, self.level):
            if entry.record is None and log.lines:
                log.write(Text(""))  # a blank line before each operator message
            log.write(render(entry, self.level), width=self._width())

    def say(self, text: str, style: str = "italic") -> None:
        """A line of the console's own (an error, a notice): shown, never recorded."""
        self.chat.write(Text(for_terminal(text), style=style), width=self._width())

    def poll(self) -> None:
        self.polls += 1
        log = self.chat
        for entry in self.conversation.poll():
            self._write(log, entry)
            self.pending.discard(settles(entry) or "")
            if entry.record is not None and activity(entry):
                self.activity = activity(entry) or ""
        if self.behind_other and self.pending and not self.runner.ticked_elsewhere():
            self.behind_other = False
            self.runner.want()
        reap_left()  # a tick left running by a switch of agent, once it ends
        ended = self.runner.step()
        if ended is not None:
            self._ended(ended)
        self._status()

    def _ended(self, end: TickEnd) -> None:
        if end.interrupted:
            self.say(
                f"interrupted: the turn resumes at the next tick (`holon tick {self.home.agent_id}`"
                " or your next prompt); background tasks go on",
                "bold yellow",
            )
            self.pending.clear()
        elif end.report and end.report.get("outcome") == "busy":
            self.behind_other = bool(self.pending)  # due work alone is left to that process
            if self.pending:
                self.say("another process is ticking this agent (watch or cron): following it")
        elif end.exit_code != 0 and end.stderr:
            self.say(end.stderr, "bold red")
        self.activity = ""

    def working(self) -> bool:
        """A tick of ours runs, or another process (watch, cron) holds the agent's turn lock."""
        return self.runner.running or self.runner.ticked_elsewhere()

    def _status(self) -> None:
        working = self.working()
        if working and not self.started:
            self.started = time.monotonic()
        elif not working:
            self.started = 0.0
        state = "working" if working else "idle"
        header = f"holon console · {self.home.agent_id} · display {self.level} · {state}"
        self._show(self.header, header + self.others)
        line = ""
        if working:
            spent = int(time.monotonic() - self.started)
            frame = SPINNER[int(time.monotonic() * 8) % len(SPINNER)]
            what = self.activity or "the turn is starting"
            if self.runner.running:
                line = f"{frame} working {spent}s · {what} · Ctrl-C interrupts"
            else:
                line = f"{frame} working (ticked by another process) {spent}s · {what}"
        self._show(self.working_line, line[:2000])

    def _show(self, widget: Static, text: str) -> None:
        """Update a status line only when its text changes (an idle console redraws nothing)."""
        if getattr(widget, "shown_text", None) != text:
            widget.shown_text = text  # type: ignore[attr-defined]
            widget.update(Text(text))

    def _count_others(self) -> None:
        self.run_worker(self._others, thread=True, exclusive=True, group="others")

    def _others(self) -> None:
        rows = [r for r in views.agent_rows(self.home.agent_id) if "action required" in r["label"]]
        text = "".join(f" · {r['label'].strip()}" for r in rows if not r["label"].startswith("*"))
        self.call_from_thread(setattr, self, "others", text)

    # -- input --------------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        text = message.text
        if text.startswith("/") and not text.startswith("//"):
            self.command(text)
            return
        text = text[1:] if text.startswith("//") else text  # `//etc is full` sends `/etc is full`
        try:
            message_id = self.runner.submit(text)
        except HolonError as exc:
            self.say(
                f"holon: {exc.kind}: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else ""),
                "bold red",
            )
            return
        self.pending.add(message_id)
        self.activity = ""  # a new message never inherits the last turn's activity
        self.poll()

    def command(self, line: str) -> None:
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name == "/quit":
            self.action_quit_console()
        elif name == "/display":
            self.display_level(arg)
        elif name == "/agent" and arg:
            self.switch(arg)
        elif name.lstrip("/") in OVERLAYS:
            self.action_overlay(name.lstrip("/"))
        else:
            self.say(f"unknown command {line.split()[0]!r}; /help lists them", "bold red")

    def display_level(self, arg: str) -> None:
        level = level_named(arg) if arg else None
        if level is None:
            self.say(f"display is {self.level}; /display info|verbose|debug (or 3, 4, 5)")
            return
        self.level = level
        self.redraw()

    def switch(self, agent: str) -> None:
        from holon.home import registry

        try:
            home = registry.resolve(agent)
        except HolonError as exc:
            self.say(f"holon: {exc.kind}: {exc.message}", "bold red")
            return
        pid = self.runner.detach()
        self.action_close_overlay()  # it showed the agent left
        self._open(home)
        self.composer.prompts = History(
            [e.text for e in self.conversation.entries if e.record is None]
        )
        self.redraw()
        self.say(f"now with agent {home.agent_id}")
        if pid is not None:
            self.say(f"the turn of the agent left goes on in `holon tick` (pid {pid})")

    # -- actions ------------------------------------------------------------------------------

    def action_overlay(self, name: str) -> None:
        """Open overlay `name` as a pane above the conversation (in place of one already open;
        the same one again loads afresh). The composer keeps the keyboard, except that a list to
        pick from (tasks, children, agents) takes the arrows and Enter until one types."""
        if name == "agents":
            overlay: Overlay = AgentsOverlay(self.home.agent_id)
        elif name in ("tasks", "children"):
            title = "Tasks" if name == "tasks" else "Child agents"
            overlay = TasksOverlay(self.home, title, children_only=name == "children")
        elif name == "help":
            overlay = TextOverlay("Help", help_text, from_end=False)
        else:
            load = partial(views.command_text, self.home, name, self.model)
            overlay = TextOverlay(OVERLAYS[name], load)
        self.action_close_overlay()
        self.overlay = overlay
        self.query_one("#body").mount(overlay, before=self.chat)

    def action_close_overlay(self) -> None:
        """Esc: close the open overlay; the keyboard goes back to the composer."""
        if self.overlay is not None:
            self.overlay.remove()
            self.overlay = None
            self.composer.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Esc without an overlay is left to the focused widget, as it was
        return action != "close_overlay" or self.overlay is not None

    def action_page(self, direction: int) -> None:
        """PgUp/PgDn: scroll the open overlay, else the conversation."""
        target = self.overlay.scrolled() if self.overlay is not None else self.chat
        if direction < 0:
            target.scroll_page_up(animate=False)
        else:
            target.scroll_page_down(animate=False)

    def on_agents_overlay_picked(self, message: AgentsOverlay.Picked) -> None:
        self.action_close_overlay()
        if message.agent_id and message.agent_id != self.home.agent_id:
            self.switch(message.agent_id)

    def on_key(self, event: events.Key) -> None:
        """Typing while an overlay's list has the keyboard goes to the composer (a task's input
        line is the only other place that takes text)."""
        focused = self.focused
        if event.is_printable and event.character and not isinstance(focused, (Composer, Input)):
            event.stop()
            self.composer.focus()
            self.composer.insert(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """A paste where nothing takes text (an overlay's list) goes to the composer too."""
        if not isinstance(self.focused, (Composer, Input)):
            event.stop()
            self.composer.focus()
            self.composer.insert(event.text)

    def action_interrupt(self) -> None:
        """Ctrl-C: interrupt the running turn; otherwise clear the composer."""
        if self.runner.interrupt():
            self.say("interrupting the turn…", "yellow")
            return
        composer = self.composer
        if composer.text:
            composer.clear()
        else:
            self.notify("Ctrl-Q or /quit leaves the console")

    def action_quit_console(self) -> None:
        self.exit(0)

    def on_unmount(self) -> None:
        self.detached = self.runner.detach()


def render(entry: Entry, level: str) -> Text:
    """One conversation row: the operator's message, a brief, or a line of activity."""
    record = entry.record
    if record is None:
        return Text("› " + entry.text, style="bold cyan")
    if entry.kind == "brief":
        if record["visibility"] == "action_required" or "failure" in record["title"]:
            style = "bold yellow" if record["visibility"] == "action_required" else "bold red"
            return Text.assemble((one_line(record["title"]) + ": ", style), entry.text)
        return Text(entry.text)
    summary = for_terminal(record["summary"]).replace("\n", " ")
    tag = f"[{one_line(record['source_event_kind'])}] " if level == "debug" else ""
    return Text(f"  · {tag}{summary}", style="dim")
